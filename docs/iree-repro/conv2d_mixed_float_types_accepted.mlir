// An fp32 input with bf16 weights: no CONV2D mode of TOSA has these types (ERROR_IF
// "operator data types do not meet requirement of operator Supported Data Types").
// IREE compiles it without a word (exit status 0); it should refuse it.
func.func @main(%in: tensor<1x2x2x1xf32>, %w: tensor<1x1x1x1xbf16>, %bias: tensor<1xf32>) -> tensor<1x2x2x1xf32> {
  %izp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wzp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %0 = "tosa.conv2d"(%in, %w, %bias, %izp, %wzp) <{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xbf16>, tensor<1xf32>, tensor<1xf32>, tensor<1xbf16>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}
