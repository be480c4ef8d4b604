// LSTM, GRU and RNN with layout 1 (batch first) downgraded below 14 through
// Transposes of X, the initial states and the outputs, through the
// converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> BatchFirstByTransposes() {
  return AllNodes({
      {"lstm_batch_first", 14, 13,
       "g (float[2,5,3] X, float[1,16,3] W, float[1,16,4] R, float[2,1,4] H, float[2,1,4] C) "
       "=> (float[2,5,1,4] Y, float[2,1,4] YH, float[2,1,4] YC) "
       "{ [l] Y, YH, YC = LSTM <hidden_size = 4, layout = 1> (X, W, R, , , H, C) }",
       "[l_layout__0] X_seq_first__0 = Transpose <perm = [1, 0, 2]> (X); "
       "[l_layout__1] H_seq_first__0 = Transpose <perm = [1, 0, 2]> (H); "
       "[l_layout__2] C_seq_first__0 = Transpose <perm = [1, 0, 2]> (C); "
       "[l] Y__0, YH__0, YC__0 = LSTM <hidden_size = 4> "
       "(X_seq_first__0, W, R, \"\", \"\", H_seq_first__0, C_seq_first__0); "
       "[l_layout__3] Y = Transpose <perm = [2, 0, 1, 3]> (Y__0); "
       "[l_layout__4] YH = Transpose <perm = [1, 0, 2]> (YH__0); "
       "[l_layout__5] YC = Transpose <perm = [1, 0, 2]> (YC__0)",
       ""},
      {"gru_batch_first_y_only", 14, 7,
       "g (float[2,5,3] X, float[2,12,3] W, float[2,12,4] R) => (float[2,5,2,4] Y) "
       "{ [g] Y = GRU <hidden_size = 4, layout = 1, direction = \"bidirectional\"> (X, W, R) }",
       "[g_layout__0] X_seq_first__0 = Transpose <perm = [1, 0, 2]> (X); "
       "[g] Y__0 = GRU <hidden_size = 4, direction = \"bidirectional\"> (X_seq_first__0, W, R); "
       "[g_layout__1] Y = Transpose <perm = [2, 0, 1, 3]> (Y__0)",
       ""},
      {"rnn_batch_first_last_state_only", 14, 13,
       "g (float[2,5,3] X, float[1,4,3] W, float[1,4,4] R) => (float[2,1,4] YH) "
       "{ [r] \"\", YH = RNN <hidden_size = 4, layout = 1> (X, W, R) }",
       "[r_layout__0] X_seq_first__0 = Transpose <perm = [1, 0, 2]> (X); "
       "[r] \"\", YH__0 = RNN <hidden_size = 4> (X_seq_first__0, W, R); "
       "[r_layout__1] YH = Transpose <perm = [1, 0, 2]> (YH__0)",
       ""},
      {"rnn_layout_0_unchanged", 14, 13,
       "g (float[5,2,3] X, float[1,4,3] W, float[1,4,4] R) => (float[5,1,2,4] Y) "
       "{ [r] Y = RNN <hidden_size = 4, layout = 0> (X, W, R) }",
       "[r] Y = RNN <hidden_size = 4> (X, W, R)", ""},
  });
}

INSTANTIATE_TEST_SUITE_P(BatchFirstByTransposes, ConversionCaseTest,
                         ::testing::ValuesIn(BatchFirstByTransposes()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
