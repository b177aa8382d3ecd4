// MAX_POOL2D of f8E4M3FN (EXT-FP8E4M3): IREE has no lowering for it.
func.func @main(%arg0: tensor<1x2x2x1xf8E4M3FN>) -> tensor<1x1x1x1xf8E4M3FN> {
  %0 = "tosa.max_pool2d"(%arg0) <{kernel = array<i64: 2, 2>, nan_mode = #tosa.nan_mode<PROPAGATE>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x2x2x1xf8E4M3FN>) -> tensor<1x1x1x1xf8E4M3FN>
  return %0 : tensor<1x1x1x1xf8E4M3FN>
}
