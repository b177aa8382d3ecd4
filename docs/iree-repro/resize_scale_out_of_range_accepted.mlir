// RESIZE with scale_y_n = 2813 > (1 << 11): TOSA's
// ERROR_IF(scale_y_n > (1 << 11) || scale_x_n > (1 << 11)).  IREE compiles it (exit 0).
func.func @main(%in: tensor<1x10x9x1xi8>) -> tensor<1x1x1x1xi32> {
  %scale = "tosa.const_shape"() <{values = dense<[2813, 2944, 293, 293]> : tensor<4xindex>}> : () -> !tosa.shape<4>
  %offset = "tosa.const_shape"() <{values = dense<[28129, 2636]> : tensor<2xindex>}> : () -> !tosa.shape<2>
  %border = "tosa.const_shape"() <{values = dense<[2812, 292]> : tensor<2xindex>}> : () -> !tosa.shape<2>
  %0 = "tosa.resize"(%in, %scale, %offset, %border) <{mode = #tosa.resize_mode<BILINEAR>}> : (tensor<1x10x9x1xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x1x1x1xi32>
  return %0 : tensor<1x1x1x1xi32>
}
