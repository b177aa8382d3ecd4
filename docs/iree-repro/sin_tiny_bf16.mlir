// SIN(-9.70488e-35) in bf16 (a normal value): sin(x) = x to within TOSA's bound;
// IREE returns 6.24e-08.
func.func @main(%arg0: tensor<2xbf16>) -> tensor<2xbf16> {
  %0 = "tosa.sin"(%arg0) : (tensor<2xbf16>) -> tensor<2xbf16>
  return %0 : tensor<2xbf16>
}
