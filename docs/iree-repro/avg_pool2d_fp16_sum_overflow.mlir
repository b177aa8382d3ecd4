// AVG_POOL2D of [40000, 40000] (kernel 2x1, fp16 accumulator): the mean is 40000, the sum
// 80000 overflows fp16.  IREE sums, then divides: inf.
func.func @main(%arg0: tensor<1x2x1x1xf16>) -> tensor<1x1x1x1xf16> {
  %izp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %ozp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %0 = "tosa.avg_pool2d"(%arg0, %izp, %ozp) <{acc_type = f16, kernel = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x2x1x1xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x1x1x1xf16>
  return %0 : tensor<1x1x1x1xf16>
}
