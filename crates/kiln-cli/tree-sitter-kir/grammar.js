// tree-sitter grammar for Kiln's `.kir` text format (design/IR.md §1).
// Generated into src/ with tree-sitter-cli 0.22.6 (ABI 14, which inkjet's
// tree-sitter 0.23 loads): `tree-sitter generate --abi 14`.

const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)));

module.exports = grammar({
  name: 'kir',

  extras: $ => [/\s/, $.comment],

  word: $ => $.identifier,

  rules: {
    source_file: $ => repeat($.function),

    comment: _ => token(seq('//', /[^\n]*/)),

    function: $ => seq(
      'func', $.function_name,
      '(', optional(commaSep1($.parameter)), ')',
      '->', $.result_types,
      '{', repeat($.instruction), $.return, '}',
    ),

    function_name: _ => /@[A-Za-z0-9_.]+/,
    value: _ => /%[A-Za-z0-9_.]+/,
    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,

    parameter: $ => seq($.value, ':', $.tensor_type),

    result_types: $ => choice(
      $.tensor_type,
      seq('(', optional(commaSep1($.tensor_type)), ')'),
    ),

    instruction: $ => prec.right(seq(
      commaSep1($.value), '=', $.op_name,
      optional(commaSep1($._operand)),
      optional($.attributes),
      optional(seq(':', $.tensor_type)),
    )),

    op_name: $ => $.identifier,

    return: $ => seq('return', optional(commaSep1($.value))),

    _operand: $ => choice($.value, $._literal, $.none, $.operand_list),

    // An absent optional tensor operand.
    none: _ => 'none',

    // A tensor-list operand: `[%a, %b]`, `[none, %i]`.
    operand_list: $ => seq('[', optional(commaSep1(choice($.value, $.none))), ']'),

    _literal: $ => choice($.integer, $.float, $.boolean, $.complex),

    integer: _ => /-?[0-9]+/,
    float: _ => token(choice(
      /-?[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?/,
      /-?[0-9]+[eE][-+]?[0-9]+/,
      'inf', '-inf', 'nan',
    )),
    boolean: _ => choice('true', 'false'),
    complex: $ => seq('complex', '(', choice($.integer, $.float), ',', choice($.integer, $.float), ')'),
    string: _ => /"[^"\n]*"/,

    attributes: $ => seq('{', optional(commaSep1($.attribute)), '}'),
    attribute: $ => seq($.attribute_name, '=', $._attribute_value),
    attribute_name: $ => $.identifier,
    _attribute_value: $ => choice($._literal, $.string, $.list, $.value, $.constant, $.device),
    constant: $ => $.identifier,
    device: _ => /[a-z]+:[0-9]+/,
    list: $ => seq('[', optional(commaSep1($.integer)), ']'),

    tensor_type: $ => seq(
      'tensor', '<', repeat($.dim), alias($.identifier, $.dtype),
      repeat(seq(',', $.type_attribute)), '>',
    ),
    dim: _ => /[0-9]+x/,

    type_attribute: $ => choice(seq('strides', '=', $.list), $.identifier, $.device),
  },
});
