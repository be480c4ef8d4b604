"""Keeps deploy/ in step with the binaries it runs.

    manifests_check.py SERVER CLI STATUS CONTAINERFILE MANIFEST...

Checks, failing with a list of what is wrong:
- every --flag that the manifests and the Containerfile pass to
  onnx-convert-server, onnx-convert or onnx-convert-status is one that
  binary's help lists (flags issue 21 adds and not merged yet are named
  "pending merge");
- the manifests parse as Kubernetes objects (`kubectl label --local`, which
  works offline: YAML syntax, apiVersion, kind and metadata are checked,
  the rest of the schema is not, as no API server is reachable) and hold
  what deploy/README.md promises: gRPC probes, memory matching the budget
  flag, a grace period beyond the drain, a headless Service, an autoscaling/v2
  CPU HPA, a PodDisruptionBudget, an Indexed Job sharding `batch` over the
  headless Service;
- the Containerfile copies the binaries Bazel builds and installs the Debian
  package of every shared library they load.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

# Flags of issue 21 that other branches add; listed so that a failure names
# them as pending rather than wrong. Remove a row once it is merged.
PENDING = {
    "onnx-convert-server": set(),
    "onnx-convert": set(),
}

# Packages debian:12 already holds (its essential set).
BASE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}

# What the server needs beyond --max_inflight_bytes (see deployment.yaml).
BASELINE_BYTES = 512 << 20

problems = []


def problem(text):
    problems.append(text)


def run(command):
    return subprocess.run(command, capture_output=True, text=True)


# --- the flags each binary has ---------------------------------------------

def absl_flags(binary):
    """The flags of an absl binary, from its --helpfull."""
    text = run([binary, "--helpfull"]).stdout + run([binary, "--help"]).stdout
    return set(re.findall(r"^\s+--([A-Za-z0-9_]+)", text, re.M))


def cli_flags(binary):
    """{command: flags} of onnx-convert from its --help; "" holds the flags
    outside the command list (--server), which every command takes."""
    text = run([binary, "--help"]).stdout
    flags = {"": set()}
    in_commands = False
    command = ""
    for line in text.splitlines():
        if line.strip() == "commands:":
            in_commands = True
            continue
        if in_commands and not line.strip():
            in_commands = False
            command = ""
            continue
        match = re.match(r"^  ([a-z][a-z-]*) ", line)
        if in_commands and match:
            command = match.group(1)
            flags.setdefault(command, set())
        key = command if in_commands else ""
        flags[key] |= set(re.findall(r"--([a-z][a-z0-9-]*)", line))
    return flags


def flags_passed(args):
    """The long flags of an argument list."""
    names = []
    for arg in args:
        if arg.startswith("--") and len(arg) > 2:
            names.append(arg[2:].split("=", 1)[0])
    return names


def check_flags(where, binary_name, args, known):
    """Names every flag of `args` the binary's help does not list."""
    if binary_name == "onnx-convert":
        command = args[0] if args else ""
        allowed = known["onnx-convert"].get(command, set()) | known["onnx-convert"][""]
        if command not in known["onnx-convert"]:
            problem(f"{where}: onnx-convert has no command '{command}'")
    elif binary_name in known:
        allowed = known[binary_name]
    else:
        problem(f"{where}: runs '{binary_name}', which the image does not hold")
        return
    for flag in flags_passed(args):
        # absl takes --noNAME for a bool flag NAME.
        negated = binary_name != "onnx-convert" and flag.startswith("no")
        if flag in allowed or (negated and flag[2:] in allowed):
            continue
        if flag in PENDING.get(binary_name, set()):
            problem(f"{where}: --{flag} of {binary_name}: not in its --help yet "
                    "(pending merge, issue 21)")
        else:
            problem(f"{where}: --{flag} is unknown to {binary_name}")


# --- the Containerfile -------------------------------------------------------

def containerfile_instructions(path):
    """(instruction, argument text) pairs, continuation lines joined."""
    with open(path) as f:
        text = re.sub(r"\\\n", " ", f.read())
    result = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def exec_form(text):
    """The argument list of a JSON (exec) form, else of a shell form."""
    text = text.strip()
    if text.startswith("["):
        return json.loads(text)
    return shlex.split(text)


def check_containerfile(path, binaries, known):
    """Returns the ENTRYPOINT's argument list."""
    entrypoint, cmd = [], []
    copied, exposed = set(), set()
    packages = set()
    for keyword, rest in containerfile_instructions(path):
        if keyword == "COPY":
            copied |= {os.path.basename(p) for p in shlex.split(rest)[:-1]}
        elif keyword == "RUN" and "apt-get install" in rest:
            words = shlex.split(rest.split("apt-get install", 1)[1].split("&&")[0])
            packages |= {w for w in words if not w.startswith("-")}
        elif keyword == "EXPOSE":
            exposed |= {int(p.split("/")[0]) for p in rest.split()}
        elif keyword == "ENTRYPOINT":
            entrypoint = exec_form(rest)
        elif keyword == "CMD":
            cmd = exec_form(rest)
        elif keyword == "HEALTHCHECK":
            words = rest.split(" CMD ", 1)
            health = exec_form(words[1]) if len(words) == 2 else []
            if health:
                check_flags("Containerfile HEALTHCHECK", os.path.basename(health[0]),
                            health[1:], known)
    for name in binaries:
        if name not in copied:
            problem(f"Containerfile: does not copy {name}")
    for name in copied - set(binaries):
        problem(f"Containerfile: copies {name}, which Bazel does not build here")
    if entrypoint:
        check_flags("Containerfile ENTRYPOINT+CMD", os.path.basename(entrypoint[0]),
                    entrypoint[1:] + cmd, known)
        for name, default in (("port", 50051), ("metrics_port", 0)):
            port = int(flag_value(cmd, name) or default)
            if port and port not in exposed:
                problem(f"Containerfile: --{name} {port} is not EXPOSEd")
    else:
        problem("Containerfile: no ENTRYPOINT")
    for package in needed_packages(binaries.values()) - BASE_PACKAGES - packages:
        problem(f"Containerfile: does not install {package}, whose library the binaries load")
    return entrypoint


def needed_packages(binary_paths):
    """The Debian packages of the shared libraries the binaries load."""
    libraries = set()
    for binary in binary_paths:
        for line in run(["ldd", binary]).stdout.splitlines():
            match = re.search(r"=>\s+(/\S+)", line)
            # The sanitizer runtimes are loaded only by the sanitized test
            # builds (--config=asan/ubsan), never by the image's binaries.
            if match and not re.search(r"/lib(asan|ubsan|lsan|tsan)\.so", match.group(1)):
                libraries.add(os.path.realpath(match.group(1)))
    # One dpkg call for all (each call reads the whole file database); a
    # library may be registered under /lib or /usr/lib (merged /usr).
    candidates = sorted(libraries | {l.replace("/usr/lib/", "/lib/", 1) for l in libraries})
    packages = set()
    for line in run(["dpkg", "-S"] + candidates).stdout.splitlines():
        names, _, path = line.partition(": ")
        if path in candidates:
            packages |= {n.split(":", 1)[0].strip() for n in names.split(",")}
    return packages


# --- the manifests -----------------------------------------------------------

def decode_manifests(paths):
    """The objects of the manifests as kubectl reads them (offline), or None
    without kubectl."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("manifests_check: kubectl not found: manifests not decoded", file=sys.stderr)
        return None
    objects = []
    for path in paths:
        done = run([kubectl, "label", "--local", "-f", path, "checked=yes", "-o", "json"])
        if done.returncode != 0:
            problem(f"{path}: kubectl cannot decode it: {done.stderr.strip()}")
            continue
        decoder, text, at = json.JSONDecoder(), done.stdout, 0
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            if at >= len(text):
                break
            value, at = decoder.raw_decode(text, at)
            value["_file"] = os.path.basename(path)
            objects.append(value)
    return objects


def quantity_bytes(text):
    """A Kubernetes memory quantity in bytes."""
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "": 1}
    match = re.fullmatch(r"(\d+)([KMGT]i?|k)?", str(text))
    if not match:
        problem(f"memory quantity '{text}' not understood")
        return 0
    return int(match.group(1)) * units[match.group(2) or ""]


def flag_value(args, name):
    for arg in args:
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
    if f"--{name}" in args:
        at = args.index(f"--{name}")
        return args[at + 1] if at + 1 < len(args) else None
    return None


def container_binary(container, entrypoint):
    command = container.get("command") or entrypoint
    return os.path.basename(command[0]) if command else "", list(command[1:]) + \
        list(container.get("args", []))


def check_server_pod(obj, entrypoint, known):
    spec = obj["spec"]["template"]["spec"]
    for container in spec["containers"]:
        where = f"{obj['_file']} {obj['kind']}/{obj['metadata']['name']} {container['name']}"
        binary, args = container_binary(container, entrypoint)
        check_flags(where, binary, args, known)
        if binary != "onnx-convert-server":
            continue
        port = int(flag_value(args, "port") or 50051)
        for probe in ("readinessProbe", "livenessProbe"):
            grpc_probe = container.get(probe, {}).get("grpc")
            if not grpc_probe or grpc_probe.get("port") != port:
                problem(f"{where}: no {probe} of grpc on --port {port}")
        container_ports = {p["containerPort"] for p in container.get("ports", [])}
        for name, default in (("port", 50051), ("metrics_port", 0)):
            value = int(flag_value(args, name) or default)
            if value and value not in container_ports:
                problem(f"{where}: --{name} {value} is not a containerPort")
        grace_ms = int(flag_value(args, "grace_ms") or 10000)
        pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {})
        sleep_ms = 0
        if pre_stop.get("command", [""])[0] == "sleep":
            sleep_ms = int(pre_stop["command"][1]) * 1000
        period_ms = int(spec.get("terminationGracePeriodSeconds", 30)) * 1000
        if period_ms <= grace_ms + sleep_ms:
            problem(f"{where}: terminationGracePeriodSeconds {period_ms // 1000} s is not "
                    f"beyond the preStop sleep and --grace_ms ({(grace_ms + sleep_ms) / 1000} s)")
        budget = flag_value(args, "max_inflight_bytes")
        resources = container.get("resources", {})
        request = quantity_bytes(resources.get("requests", {}).get("memory", "0"))
        limit = quantity_bytes(resources.get("limits", {}).get("memory", "0"))
        if budget is None:
            problem(f"{where}: no --max_inflight_bytes")
        elif request != int(budget) + BASELINE_BYTES or limit != request:
            problem(f"{where}: memory request {request} and limit {limit} should both be "
                    f"--max_inflight_bytes {budget} + a {BASELINE_BYTES >> 20} MiB baseline")


def check_manifests(objects, entrypoint, known):
    by_kind = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    for kind in ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                 "Job"):
        if kind not in by_kind:
            problem(f"deploy/k8s: no {kind}")
    for obj in by_kind.get("Deployment", []):
        check_server_pod(obj, entrypoint, known)
    headless = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])
                if s["spec"].get("clusterIP") == "None"}
    if not headless:
        problem("deploy/k8s: no headless Service (clusterIP: None)")
    for service in headless.values():
        check_service_ports(service, by_kind.get("Deployment", []))
    for hpa in by_kind.get("HorizontalPodAutoscaler", []):
        if hpa["apiVersion"] != "autoscaling/v2" or not any(
                m.get("resource", {}).get("name") == "cpu" for m in hpa["spec"]["metrics"]):
            problem(f"{hpa['_file']}: the HPA is not an autoscaling/v2 one on CPU")
    for job in by_kind.get("Job", []):
        check_job(job, entrypoint, known, headless)


def check_service_ports(service, deployments):
    """Each port of the Service reaches a port of the pods it selects."""
    selector = service["spec"].get("selector", {})
    where = f"{service['_file']} Service/{service['metadata']['name']}"
    pods = [d for d in deployments if selector and selector.items() <=
            d["spec"]["template"]["metadata"].get("labels", {}).items()]
    if not pods:
        problem(f"{where}: selects no Deployment's pods")
    for deployment in pods:
        ports = [p for c in deployment["spec"]["template"]["spec"]["containers"]
                 for p in c.get("ports", [])]
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            if not any(target in (p.get("name"), p["containerPort"]) for p in ports):
                problem(f"{where}: port {port['port']} targets {target}, which "
                        f"Deployment/{deployment['metadata']['name']} does not open")


def check_job(job, entrypoint, known, headless):
    spec = job["spec"]
    where = f"{job['_file']} Job/{job['metadata']['name']}"
    if spec.get("completionMode") != "Indexed":
        problem(f"{where}: not an Indexed Job")
    for container in spec["template"]["spec"]["containers"]:
        binary, args = container_binary(container, entrypoint)
        check_flags(f"{where} {container['name']}", binary, args, known)
        shard = flag_value(args, "shard") or ""
        if shard != f"$(JOB_COMPLETION_INDEX)/{spec.get('completions')}":
            problem(f"{where}: --shard '{shard}' is not $(JOB_COMPLETION_INDEX)/completions")
        server = flag_value(args, "server") or ""
        match = re.fullmatch(r"dns:///([^.:]+)[^:]*:(\d+)", server)
        if not match or match.group(1) not in headless or int(match.group(2)) not in [
                p["port"] for p in headless[match.group(1)]["spec"]["ports"]]:
            problem(f"{where}: --server '{server}' is not dns:/// of a headless Service port")


def main(argv):
    server, cli, status, containerfile = argv[1:5]
    manifests = argv[5:]
    binaries = {"onnx-convert-server": server, "onnx-convert": cli,
                "onnx-convert-status": status}
    known = {"onnx-convert-server": absl_flags(server), "onnx-convert": cli_flags(cli),
             "onnx-convert-status": absl_flags(status)}
    for name, flags in known.items():
        if not flags:
            problem(f"{name}: its help lists no flags")
    entrypoint = check_containerfile(containerfile, binaries, known)
    objects = decode_manifests(manifests)
    if objects is not None:
        check_manifests(objects, entrypoint, known)
    for text in problems:
        print(f"FAIL {text}")
    pending = sorted({t for t in problems if "pending merge" in t})
    if pending:
        print(f"{len(pending)} of the {len(problems)} failures are flags pending merge")
    if not problems:
        print(f"deploy: {len(manifests)} manifests and the Containerfile agree with the binaries")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
