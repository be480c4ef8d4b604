"""A client for the onnx-convert gRPC service (package onnxconvert.v1).

The stubs (onnx_convert_service_pb2*.py, grpc_health_pb2*.py,
rpc_status_pb2*.py) are generated once by generate_stubs.sh and checked in
beside this file; Debian's python3-grpcio and python3-protobuf run them.

    client = Client("dns:///onnx-convert-headless:50051")
    converted, report = client.convert(open("m.onnx", "rb").read(), target_opset=17)

Any gRPC target works ("host:port", "dns:///host:port", "ipv4:a:p,b:p",
"unix:/path"); calls are balanced round_robin over its addresses, skip
replicas whose grpc.health.v1 status is not SERVING, and are retried on
UNAVAILABLE and RESOURCE_EXHAUSTED (a conversion is idempotent), all by
gRPC from the channel's service config (see service_config).
"""

import json
import os
import shutil
import sys
import threading
from dataclasses import dataclass, field

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpc_health_pb2  # noqa: E402
import grpc_health_pb2_grpc  # noqa: E402
import onnx_convert_service_pb2 as pb  # noqa: E402
import onnx_convert_service_pb2_grpc as pb_grpc  # noqa: E402
import rpc_status_pb2  # noqa: E402

SERVICE = "onnxconvert.v1.OnnxConvert"
# The metadata key declaring the size of a unary call's model (see the
# server's service/admission.h).
MODEL_BYTES_METADATA = "x-model-bytes"


@dataclass(frozen=True)
class RetryPolicy:
    """How gRPC retries a call that failed with one of `codes` (attempts
    include the first; gRPC allows at most 5). Streams are retried only
    while what they sent fits gRPC's retry buffer (256 KiB by default)."""
    max_attempts: int = 5
    initial_backoff_s: float = 0.2
    max_backoff_s: float = 5.0
    backoff_multiplier: float = 2.0
    codes: tuple = ("UNAVAILABLE", "RESOURCE_EXHAUSTED")


def service_config(balancing="round_robin", retry=RetryPolicy(), health_check=True):
    """The gRPC service config (as JSON text) of a Client: `balancing` names
    a load-balancing policy ("round_robin", "pick_first"), `retry` is a
    RetryPolicy or None for no retries, `health_check` skips addresses whose
    grpc.health.v1 status for the service is not SERVING."""
    config = {}
    if balancing:
        config["loadBalancingConfig"] = [{balancing: {}}]
    if retry is not None:
        config["methodConfig"] = [{
            "name": [{"service": SERVICE}],
            "retryPolicy": {
                "maxAttempts": retry.max_attempts,
                "initialBackoff": f"{retry.initial_backoff_s}s",
                "maxBackoff": f"{retry.max_backoff_s}s",
                "backoffMultiplier": retry.backoff_multiplier,
                "retryableStatusCodes": list(retry.codes),
            },
        }]
    if health_check:
        config["healthCheckConfig"] = {"serviceName": SERVICE}
    return json.dumps(config)


class ConversionError(Exception):
    """A call the server refused: the gRPC code and its message. `detail` is
    the ConversionError message attached to a FAILED_PRECONDITION (the step,
    node and reason), else None; `retry_delay_s` the google.rpc.RetryInfo
    hint of a rejection under load, else None."""

    def __init__(self, code, message, detail=None, retry_delay_s=None):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.detail = detail
        self.retry_delay_s = retry_delay_s

    @staticmethod
    def from_rpc(error):
        """The ConversionError of a grpc.RpcError, its rich details decoded."""
        detail, delay = None, None
        for key, value in (error.trailing_metadata() or ()):
            if key != "grpc-status-details-bin":
                continue
            status = rpc_status_pb2.Status.FromString(value)
            for any_detail in status.details:
                if any_detail.Is(pb.ConversionError.DESCRIPTOR):
                    detail = pb.ConversionError()
                    any_detail.Unpack(detail)
                elif any_detail.type_url.endswith("/google.rpc.RetryInfo"):
                    delay = _retry_delay_s(any_detail.value)
        return ConversionError(error.code(), error.details(), detail, delay)


def _retry_delay_s(retry_info):
    """The retry_delay of a serialized google.rpc.RetryInfo, in seconds."""
    from google.protobuf import duration_pb2
    # RetryInfo holds one field: 1, a google.protobuf.Duration (wire type 2).
    if len(retry_info) < 2 or retry_info[0] != 0x0A:
        return None
    length, at, shift = 0, 1, 0
    while at < len(retry_info):
        byte = retry_info[at]
        length |= (byte & 0x7F) << shift
        at += 1
        shift += 7
        if byte < 0x80:
            break
    delay = duration_pb2.Duration.FromString(retry_info[at:at + length])
    return delay.seconds + delay.nanos / 1e9


@dataclass
class StreamOutput:
    """What a streamed call returned: the StreamResult (report, timings, the
    files' names and sizes) and the files, {name: bytes} or, when written
    to a folder, {name: path}. The model's name is ""."""
    result: object
    files: dict = field(default_factory=dict)


def _convert_options(target_opset, ml_target_opset=None, ir_version=None,
                     expand_functions=True, no_casts=False, validate=None,
                     full_validation=False, verify=0, dry_run=False):
    options = pb.ConvertOptions(target_opset=target_opset, expand_functions=expand_functions,
                                no_casts=no_casts, full_validation=full_validation,
                                verify=verify, dry_run=dry_run)
    if ml_target_opset is not None:
        options.ml_target_opset = ml_target_opset
    if ir_version is not None:
        options.ir_version = ir_version
    if validate is not None:
        options.validate = validate
    return options


def _rewrite_options(profile="", passes=(), skip=(), max_fold_bytes=None, max_rounds=None,
                     rules=None, explain=()):
    options = pb.RewriteOptions(profile=profile, passes=list(passes), skip=list(skip),
                                explain=list(explain))
    if max_fold_bytes is not None:
        options.max_fold_bytes = max_fold_bytes
    if max_rounds is not None:
        options.max_rounds = max_rounds
    for name, text in (rules or {}).items():
        options.rules.add(name=name, text=text)
    return options


def _safe_location(name):
    """`name` when it is a location inside the output folder."""
    parts = name.replace("\\", "/").split("/")
    if os.path.isabs(name) or ".." in parts or not name:
        raise ConversionError(grpc.StatusCode.DATA_LOSS,
                              f"the server sent a file named {name!r} outside the output folder")
    return name


# glibc's malloc serves buffers past its mmap threshold (128 KiB at first,
# then the size of the largest freed) from fresh mappings, and gives the
# heap's free top back past its trim threshold: a stream's MiB chunks (the
# file's read, the message, its serialization, gRPC's copy) then fault in
# new pages for every chunk, which costs more CPU than the copies
# themselves (bench/README.md, stop 31: ConvertStream without the echo).
_MMAP_THRESHOLD_BYTES = 32 << 20
_TRIM_THRESHOLD_BYTES = 64 << 20
_malloc_tuned = False


def tune_malloc_for_streaming():
    """Has glibc's malloc reuse the chunk-sized buffers of streamed calls:
    allocations up to 32 MiB come from the heap and up to 64 MiB of free
    heap is kept (mallopt M_MMAP_THRESHOLD, M_TRIM_THRESHOLD), process-wide,
    once. Left as it is where the process set MALLOC_MMAP_THRESHOLD_ or
    MALLOC_TRIM_THRESHOLD_, or the C library is not glibc. A Client with
    tune_malloc (the default) calls it before its first stream."""
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
        libc.mallopt(m_mmap_threshold, _MMAP_THRESHOLD_BYTES)
        libc.mallopt(m_trim_threshold, _TRIM_THRESHOLD_BYTES)
    except (OSError, AttributeError):
        pass


def _copy_file(source, path, stop=None):
    """Copies the file `source` to `path` in the kernel (copy_file_range:
    no pass through this process's memory), else with shutil; False if
    `stop` (a threading.Event) was set before the end."""
    with open(source, "rb") as src, open(path, "wb") as dst:
        try:
            while os.copy_file_range(src.fileno(), dst.fileno(), 64 << 20):
                if stop is not None and stop.is_set():
                    return False
            return True
        except (AttributeError, OSError):
            src.seek(0)
            dst.seek(0)
            dst.truncate()
        shutil.copyfileobj(src, dst, 1 << 20)
    return True


def _size_of(source):
    """The size of a file given as bytes or as a path."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return len(source)
    return os.path.getsize(source)


class _ModelRanges:
    """Writes the output model's chunks, with the ranges of it the server
    left to the client (its FileInfo.from_upload: pieces of the uploaded
    model, unchanged) filled in from `model` (bytes or a path) where they
    fall; `emit` takes each piece of the output in order."""

    def __init__(self, ranges, model, emit, target):
        self.ranges = list(ranges)
        self.next = 0
        self.written = 0
        self.emit = emit
        self.target = target
        self.in_memory = isinstance(model, (bytes, bytearray, memoryview))
        self.model = memoryview(model) if self.in_memory else open(model, "rb")
        self.size = len(self.model) if self.in_memory else os.fstat(self.model.fileno()).st_size

    def write(self, data):
        data = memoryview(data)
        while True:
            self._fill()
            if not data:
                return
            take = len(data)
            if self.next < len(self.ranges):
                take = min(take, self.ranges[self.next].offset - self.written)
            self.emit(data[:take])
            self.written += take
            data = data[take:]

    def finish(self):
        try:
            self._fill()
            if self.next < len(self.ranges):
                self._bad()
        finally:
            self.close()

    def close(self):
        if not self.in_memory:
            self.model.close()

    def _fill(self):
        while self.next < len(self.ranges) and self.ranges[self.next].offset <= self.written:
            r = self.ranges[self.next]
            if (r.offset != self.written or r.length < 0 or r.upload_offset < 0
                    or r.upload_offset + r.length > self.size):
                self._bad()
            at, end = r.upload_offset, r.upload_offset + r.length
            while at < end:
                n = min(end - at, 1 << 20)
                piece = (self.model[at:at + n] if self.in_memory
                         else os.pread(self.model.fileno(), n, at))
                if not piece:
                    self._bad()
                self.emit(piece)
                at += len(piece)
            self.written += r.length
            self.next += 1

    def _bad(self):
        raise ConversionError(grpc.StatusCode.DATA_LOSS,
                              f"server {self.target}: its ranges of the uploaded model do "
                              f"not fit the model")


class _CopiesAhead:
    """Copies uploaded files (local paths) to temporary files in out_dir on
    a thread while the upload runs, so that an output file the server then
    names same_as_upload is only renamed into place: the copy overlaps the
    upload instead of following it. Copies not taken are removed."""

    def __init__(self, out_dir, sources):
        self._out_dir = out_dir
        self._sources = sources  # {location: local path}
        self._done = {}  # location: finished copy
        self._temps = []
        self._stop = threading.Event()
        os.makedirs(out_dir, exist_ok=True)
        self._thread = threading.Thread(target=self._run, name="copy-ahead", daemon=True)
        self._thread.start()

    def _run(self):
        for location, source in self._sources.items():
            temp = os.path.join(self._out_dir, f".{os.path.basename(location)}."
                                               f"{os.getpid()}.{id(self)}.copy")
            try:
                os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                self._temps.append(temp)
                if not _copy_file(source, temp, self._stop):
                    return
                self._done[location] = temp
            except OSError:
                continue  # the file is copied afterwards if it is needed

    def take(self, location, path):
        """Moves the finished copy of upload `location` to `path`; False
        when there is none (or it cannot be moved there)."""
        self._thread.join()
        temp = self._done.pop(location, None)
        if temp is None:
            return False
        try:
            os.replace(temp, path)
        except OSError:
            return False
        self._temps.remove(temp)
        return True

    def discard(self):
        """Stops the copying and removes the copies not taken."""
        self._stop.set()
        self._thread.join()
        for temp in self._temps:
            try:
                os.unlink(temp)
            except OSError:
                pass
        self._temps.clear()
        self._done.clear()


class Client:
    """Calls the onnx-convert servers of one gRPC target. Thread-safe.

    target: any gRPC target string. balancing, retry, health_check: see
    service_config. timeout: each call's deadline in seconds (None: none),
    retries included. Models over unary_limit_bytes go through ConvertStream
    (RewriteStream) in chunks of chunk_bytes. keep_identical_data: a
    streamed output data file the server finds identical to an uploaded one
    is not sent back but copied from the local file (False: every file is
    downloaded, as clients that predate it do). tune_malloc: see
    tune_malloc_for_streaming. channel_options: further gRPC channel
    arguments."""

    def __init__(self, target, *, balancing="round_robin", retry=RetryPolicy(),
                 health_check=True, timeout=60.0, max_message_bytes=64 << 20,
                 unary_limit_bytes=32 << 20, chunk_bytes=1 << 20, keep_identical_data=True,
                 tune_malloc=True, channel_options=()):
        self.target = target
        self.timeout = timeout
        self.unary_limit_bytes = unary_limit_bytes
        self.chunk_bytes = chunk_bytes
        self.keep_identical_data = keep_identical_data
        self.tune_malloc = tune_malloc
        options = [
            # The server's answers (a large model's report) may pass the
            # limit that bounds what this client sends.
            ("grpc.max_receive_message_length", -1),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.service_config", service_config(balancing, retry, health_check)),
            # Ours, not one a DNS TXT record may carry.
            ("grpc.service_config_disable_resolution", 1),
            ("grpc.enable_retries", 1 if retry is not None else 0),
            # Streamed chunks of MiBs: frames and windows to match (gRPC's
            # 16 KiB frames and 64 KiB first window cost many of each).
            ("grpc.http2.max_frame_size", 4 << 20),
            ("grpc.http2.lookahead_bytes", 8 << 20),
        ]
        self.channel = grpc.insecure_channel(target, options=options + list(channel_options))
        self.stub = pb_grpc.OnnxConvertStub(self.channel)
        self.health_stub = grpc_health_pb2_grpc.HealthStub(self.channel)

    def close(self):
        """Closes the channel."""
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _metadata(self, request_id, model_bytes=None):
        """The call's metadata: its request id, and the size of the model a
        unary model call carries (MODEL_BYTES_METADATA), by which the server
        admits or refuses the call before it reads the model."""
        metadata = []
        if request_id:
            metadata.append(("x-request-id", request_id))
        if model_bytes is not None:
            metadata.append((MODEL_BYTES_METADATA, str(model_bytes)))
        return tuple(metadata) or None

    def _call(self, method, request, request_id=None):
        model = getattr(request, "model", None)
        model_bytes = len(model) if model is not None else None
        try:
            return method(request, timeout=self.timeout,
                          metadata=self._metadata(request_id, model_bytes))
        except grpc.RpcError as error:
            raise ConversionError.from_rpc(error) from None

    # --- conversion ---------------------------------------------------------

    def convert(self, model_bytes, target_opset, *, name="model.onnx", request_id=None,
                **options):
        """Converts serialized model bytes; returns (converted bytes, report
        JSON). `options`: ml_target_opset, ir_version, expand_functions,
        no_casts, validate, full_validation, verify (ConvertOptions). A
        model over unary_limit_bytes goes through ConvertStream; its
        external-data references come back unchanged."""
        if len(model_bytes) > self.unary_limit_bytes:
            output = self.convert_stream(model_bytes, target_opset, name=name,
                                         keep_external_data=True, request_id=request_id,
                                         **options)
            return output.files.get("", b""), output.result.report_json
        response = self._call(self.stub.Convert, pb.ConvertRequest(
            model=model_bytes, model_name=name,
            options=_convert_options(target_opset, **options)), request_id)
        return response.model, response.report_json

    def plan(self, model_bytes, target_opset, *, name="model.onnx", request_id=None, **options):
        """The steps and adapters a conversion would run (a dry run): the
        ConvertResponse, its report (nodes_refused, each step's nodes and
        refusals), report_json and report_text; no model."""
        return self._call(self.stub.Plan, pb.ConvertRequest(
            model=model_bytes, model_name=name,
            options=_convert_options(target_opset, **options)), request_id)

    def convert_stream(self, model, target_opset, *, name="model.onnx", external_files=None,
                       keep_external_data=None, external_data_threshold=None, out_dir=None,
                       request_id=None, **options):
        """Converts a model of any size with ConvertStream: `model` is bytes
        or a file path, sent in chunks; `external_files` maps each external-
        data location the model references to a local file, uploaded too.
        keep_external_data (default: no external_files given) uploads the
        model only and leaves references as they are (as the CLI with
        --server does): with `out_dir`, the `external_files` are copied
        there, at their locations, while the call runs. Returns a StreamOutput;
        with `out_dir` the model (named as `name`'s last component) and its
        data files are written there, else kept in memory. A data file the
        server finds identical to an upload is not downloaded but written
        from the local file (see the Client's keep_identical_data); pieces of
        the output model that are pieces of `model` (weights passed through
        as they came) are written from `model`, not downloaded."""
        header = pb.StreamHeader(model_name=name,
                                 options=_convert_options(target_opset, **options))
        return self._stream(self.stub.ConvertStream, header, model, external_files,
                            keep_external_data, external_data_threshold, out_dir, request_id)

    # --- rewriting ----------------------------------------------------------

    def rewrite(self, model_bytes, *, name="model.onnx", request_id=None, **options):
        """Rewrites a model with the graph rewriter's passes: the
        RewriteResponse (model, report, report_json, report_text).
        `options`: profile ("exact", "deploy"), passes, skip,
        max_fold_bytes, max_rounds, rules ({file name: rule text}), explain.
        A model over unary_limit_bytes goes through RewriteStream."""
        rewrite_options = _rewrite_options(**options)
        if len(model_bytes) > self.unary_limit_bytes:
            header = pb.StreamHeader(model_name=name, rewrite=rewrite_options)
            output = self._stream(self.stub.RewriteStream, header, model_bytes, None, True,
                                  None, None, request_id)
            result = output.result
            return pb.RewriteResponse(model=output.files.get("", b""),
                                      report=result.rewrite_report,
                                      report_json=result.report_json,
                                      report_text=result.report_text)
        return self._call(self.stub.Rewrite, pb.RewriteRequest(
            model=model_bytes, model_name=name, options=rewrite_options), request_id)

    def rewrite_stream(self, model, *, name="model.onnx", external_files=None,
                       keep_external_data=None, external_data_threshold=None, out_dir=None,
                       request_id=None, **options):
        """Rewrite for models of any size, uploaded and returned as
        convert_stream's are; the report is `result.rewrite_report`."""
        header = pb.StreamHeader(model_name=name, rewrite=_rewrite_options(**options))
        return self._stream(self.stub.RewriteStream, header, model, external_files,
                            keep_external_data, external_data_threshold, out_dir, request_id)

    # --- streaming ------------------------------------------------------------

    def _chunks(self, header, model, external_files):
        """The messages of a streamed upload: the header, then the model and
        each external-data file as chunks."""
        yield pb.ConvertStreamRequest(header=header)
        sources = [("", model)]
        if header.external_data == pb.EXTERNAL_DATA_UPLOADED:
            sources += sorted((external_files or {}).items())
        for location, source in sources:
            if isinstance(source, (bytes, bytearray, memoryview)):
                data = memoryview(source)
                for at in range(0, len(data), self.chunk_bytes):
                    yield pb.ConvertStreamRequest(chunk=pb.Chunk(
                        name=location, data=bytes(data[at:at + self.chunk_bytes])))
                continue
            with open(source, "rb") as f:
                while True:
                    piece = f.read(self.chunk_bytes)
                    if not piece:
                        break
                    yield pb.ConvertStreamRequest(chunk=pb.Chunk(name=location, data=piece))

    def _stream(self, method, header, model, external_files, keep_external_data,
                external_data_threshold, out_dir, request_id):
        if self.tune_malloc:
            tune_malloc_for_streaming()
        if keep_external_data is None:
            keep_external_data = not external_files
        header.external_data = (pb.EXTERNAL_DATA_KEPT_BY_CLIENT if keep_external_data
                                else pb.EXTERNAL_DATA_UPLOADED)
        # An output data file identical to an uploaded one is written here
        # from the local file, not downloaded (a server that does not know
        # the flag sends it anyway).
        header.client_keeps_identical_data = (not keep_external_data and
                                              self.keep_identical_data)
        # Pieces of the output model that are pieces of the upload (weights
        # passed through as they came) are written here from `model`, not
        # downloaded.
        header.client_copies_model_ranges = True
        if external_data_threshold is not None:
            header.external_data_threshold = external_data_threshold
        # The server charges its budgets for the model before the upload.
        header.model_bytes = (len(model) if isinstance(model, (bytes, bytearray, memoryview))
                              else os.path.getsize(model))
        model_file = os.path.basename(header.model_name) or "model.onnx"
        output = StreamOutput(result=None)
        ahead = None
        if out_dir is not None and (keep_external_data or header.client_keeps_identical_data):
            ahead = _CopiesAhead(out_dir, {
                location: source for location, source in sorted((external_files or {}).items())
                if not isinstance(source, (bytes, bytearray, memoryview))})
        try:
            self._receive(method, header, model, external_files, out_dir, request_id,
                          model_file, output)
            kept = [info for info in output.result.files if info.same_as_upload]
            if keep_external_data and out_dir is not None:
                # The model's references are unchanged: its files go beside it.
                kept = [pb.FileInfo(name=location, same_as_upload=location,
                                    size=_size_of(source))
                        for location, source in sorted((external_files or {}).items())]
            for info in kept:
                self._write_kept(info, external_files or {}, out_dir, model_file, output,
                                 ahead)
        finally:
            if ahead is not None:
                ahead.discard()
        if out_dir is None:
            output.files = {name: bytes(data) for name, data in output.files.items()}
            # A file the result lists but the stream did not carry is empty.
            for info in output.result.files:
                output.files.setdefault(info.name, b"")
        return output

    def _receive(self, method, header, model, external_files, out_dir, request_id, model_file,
                 output):
        """Runs the streamed call: uploads, then takes the result into
        `output` and writes the files the stream carries."""
        open_files = {}
        ranges = None  # the model's ranges the server left to this client

        def emit_to(name):
            """Where the bytes of output file `name` go, in order."""
            if out_dir is None:
                return output.files.setdefault(name, bytearray()).extend
            if name not in open_files:
                path = os.path.join(out_dir, _safe_location(name) if name else model_file)
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                open_files[name] = open(path, "wb")
                output.files[name] = path
            return open_files[name].write

        call = method(self._chunks(header, model, external_files), timeout=self.timeout,
                      metadata=self._metadata(request_id))
        try:
            for message in call:
                if message.HasField("result"):
                    output.result = message.result
                    listed = [r for info in message.result.files if not info.name
                              for r in info.from_upload]
                    if listed:
                        ranges = _ModelRanges(listed, model, emit_to(""), self.target)
                    continue
                name = message.chunk.name
                if ranges is not None and not name:
                    ranges.write(message.chunk.data)
                else:
                    emit_to(name)(message.chunk.data)
            if ranges is not None:
                ranges.finish()
                ranges = None
        except grpc.RpcError as error:
            raise ConversionError.from_rpc(error) from None
        except BaseException:
            call.cancel()
            raise
        finally:
            if ranges is not None:
                ranges.close()
            for f in open_files.values():
                f.close()
        if output.result is None:
            raise ConversionError(grpc.StatusCode.DATA_LOSS,
                                  f"server {self.target}: the stream held no result")

    def _write_kept(self, info, external_files, out_dir, model_file, output, ahead):
        """Writes the output file `info` from the local file it is identical
        to (the upload named info.same_as_upload): in out_dir, its copy made
        ahead moved into place, else copied in the kernel; without out_dir,
        read into output.files."""
        source = external_files.get(info.same_as_upload)
        if source is None:
            raise ConversionError(grpc.StatusCode.DATA_LOSS,
                                  f"server {self.target}: output {info.name!r} is said to be "
                                  f"the upload {info.same_as_upload!r}, which was not sent")
        in_memory = isinstance(source, (bytes, bytearray, memoryview))
        size = _size_of(source)
        if size != info.size:
            raise ConversionError(grpc.StatusCode.DATA_LOSS,
                                  f"{info.same_as_upload!r} changed during the call: {size} "
                                  f"bytes, the server has {info.size}")
        if out_dir is None:
            if in_memory:
                output.files[info.name] = bytes(source)
            else:
                with open(source, "rb") as f:
                    output.files[info.name] = f.read()
            return
        path = os.path.join(out_dir, _safe_location(info.name) if info.name else model_file)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if in_memory:
            with open(path, "wb") as f:
                f.write(source)
        elif ahead is None or not ahead.take(info.same_as_upload, path):
            _copy_file(source, path)
        if os.path.getsize(path) != info.size:
            raise ConversionError(grpc.StatusCode.DATA_LOSS,
                                  f"{info.same_as_upload!r} changed during the call: "
                                  f"{os.path.getsize(path)} bytes copied, the server has "
                                  f"{info.size}")
        output.files[info.name] = path

    # --- checking and inspecting ----------------------------------------------

    def check(self, model_bytes, name="model.onnx", request_id=None):
        """The checker's verdict: (valid, [issue strings])."""
        response = self.check_report(model_bytes, name, request_id)
        issues = [f"{i.path} {i.node}: {i.code}: {i.message}".strip() for i in response.issues]
        return response.valid, issues

    def check_report(self, model_bytes, name="model.onnx", request_id=None):
        """The checker's CheckResponse (counts and issues)."""
        return self._call(self.stub.Check, pb.ModelRequest(model=model_bytes, model_name=name),
                          request_id)

    def inspect(self, model_bytes, name="model.onnx", request_id=None):
        """The model's InspectResponse: summary, text (as `onnx-convert
        inspect` prints it) and json (as its --json does)."""
        return self._call(self.stub.Inspect,
                          pb.ModelRequest(model=model_bytes, model_name=name), request_id)

    # --- the server -------------------------------------------------------------

    def capabilities(self):
        """{domain: (min opset, max opset)} the server converts."""
        response = self.capabilities_response()
        return {r.domain: (r.min_opset, r.max_opset) for r in response.opsets}

    def capabilities_response(self):
        """The whole CapabilitiesResponse (operators, adapters, limits, passes)."""
        return self._call(self.stub.Capabilities, pb.CapabilitiesRequest())

    def metrics(self):
        """The MetricsResponse of the server that answers (one replica)."""
        return self._call(self.stub.Metrics, pb.MetricsRequest())

    def health(self, service=SERVICE):
        """The grpc.health.v1 status name of `service` ("" for the server),
        e.g. "SERVING", from the replica that answers."""
        try:
            response = self.health_stub.Check(
                grpc_health_pb2.HealthCheckRequest(service=service), timeout=self.timeout)
        except grpc.RpcError as error:
            raise ConversionError.from_rpc(error) from None
        return grpc_health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
