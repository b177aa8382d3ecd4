// 0.015564 lies below 2^-6 (0.015625, the smallest normal f8E4M3FN) and rounds to it;
// IREE returns 0.  (0.0146 correctly rounds down to the subnormal 0.0136719.)
func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf8E4M3FN> {
  %0 = "tosa.cast"(%arg0) : (tensor<2xf32>) -> tensor<2xf8E4M3FN>
  return %0 : tensor<2xf8E4M3FN>
}
