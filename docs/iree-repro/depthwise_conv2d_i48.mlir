module {
  "func.func"() <{arg_attrs = [{tosa.tensor_name = "input"}, {tosa.tensor_name = "weight"}, {tosa.tensor_name = "bias"}], function_type = (tensor<1x1x1x1xi16>, tensor<1x1x1x1xi8>, tensor<1xi48>) -> tensor<1x1x1x1xi48>, res_attrs = [{tosa.tensor_name = "output"}], sym_name = "g0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<1x1x1x1xi16>, %arg1: tensor<1x1x1x1xi8>, %arg2: tensor<1xi48>):
    %0 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
    %1 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.depthwise_conv2d"(%arg0, %arg1, %arg2, %0, %1) <{acc_type = i48, dilation = array<i64: 1, 1>, local_bound = false, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x1x1x1xi16>, tensor<1x1x1x1xi8>, tensor<1xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x1x1x1xi48>
    "func.return"(%2) : (tensor<1x1x1x1xi48>) -> ()
  }) : () -> ()
  func.func @v0(%a0: tensor<1x1x1x1xi16>, %a1: tensor<1x1x1x1xi8>, %a2: tensor<1xi48>) -> (tensor<1x1x1x1xi48>) {
    %r = "func.call"(%a0, %a1, %a2) <{callee = @g0}> : (tensor<1x1x1x1xi16>, tensor<1x1x1x1xi8>, tensor<1xi48>) -> (tensor<1x1x1x1xi48>)
    "func.return"(%r) : (tensor<1x1x1x1xi48>) -> ()
  }
}
