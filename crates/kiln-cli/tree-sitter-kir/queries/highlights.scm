; Highlights for Kiln's .kir text, in inkjet's highlight names.
(comment) @comment
["func" "return"] @keyword
(function_name) @function
(op_name) @function.builtin
(value) @variable
"tensor" @type.builtin
(dim) @constant.numeric
(dtype) @type
(type_attribute) @type.enum.variant
(integer) @constant.numeric.integer
(float) @constant.numeric.float
(boolean) @constant.builtin.boolean
"complex" @constant.builtin
(none) @constant.builtin
(string) @string
(attribute_name) @attribute
(constant) @constant
(device) @constant
["(" ")" "{" "}" "[" "]" "<" ">"] @punctuation.bracket
["," ":"] @punctuation.delimiter
["=" "->"] @operator
