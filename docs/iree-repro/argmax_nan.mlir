// ARGMAX of [1, NaN, 0] with nan_mode PROPAGATE: IREE gives 1, the index of the NaN (the
// later revision's meaning).  Our revision's pseudocode, read literally, gives 2:
// apply_max_s(0, NaN) is NaN, and NaN != max_value (NaN) is true, so index 2 replaces it.
func.func @main(%arg0: tensor<3xf32>) -> tensor<i32> {
  %0 = "tosa.argmax"(%arg0) <{axis = 0 : i32, nan_mode = #tosa.nan_mode<PROPAGATE>}> : (tensor<3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
