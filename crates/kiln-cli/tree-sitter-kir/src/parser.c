#include "tree_sitter/parser.h"

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif

#define LANGUAGE_VERSION 14
#define STATE_COUNT 142
#define LARGE_STATE_COUNT 2
#define SYMBOL_COUNT 61
#define ALIAS_COUNT 1
#define TOKEN_COUNT 30
#define EXTERNAL_TOKEN_COUNT 0
#define FIELD_COUNT 0
#define MAX_ALIAS_SEQUENCE_LENGTH 12
#define PRODUCTION_ID_COUNT 3

enum ts_symbol_identifiers {
  sym_identifier = 1,
  sym_comment = 2,
  anon_sym_func = 3,
  anon_sym_LPAREN = 4,
  anon_sym_COMMA = 5,
  anon_sym_RPAREN = 6,
  anon_sym_DASH_GT = 7,
  anon_sym_LBRACE = 8,
  anon_sym_RBRACE = 9,
  sym_function_name = 10,
  sym_value = 11,
  anon_sym_COLON = 12,
  anon_sym_EQ = 13,
  anon_sym_return = 14,
  sym_none = 15,
  anon_sym_LBRACK = 16,
  anon_sym_RBRACK = 17,
  sym_integer = 18,
  sym_float = 19,
  anon_sym_true = 20,
  anon_sym_false = 21,
  anon_sym_complex = 22,
  sym_string = 23,
  sym_device = 24,
  anon_sym_tensor = 25,
  anon_sym_LT = 26,
  anon_sym_GT = 27,
  sym_dim = 28,
  anon_sym_strides = 29,
  sym_source_file = 30,
  sym_function = 31,
  sym_parameter = 32,
  sym_result_types = 33,
  sym_instruction = 34,
  sym_op_name = 35,
  sym_return = 36,
  sym__operand = 37,
  sym_operand_list = 38,
  sym__literal = 39,
  sym_boolean = 40,
  sym_complex = 41,
  sym_attributes = 42,
  sym_attribute = 43,
  sym_attribute_name = 44,
  sym__attribute_value = 45,
  sym_constant = 46,
  sym_list = 47,
  sym_tensor_type = 48,
  sym_type_attribute = 49,
  aux_sym_source_file_repeat1 = 50,
  aux_sym_function_repeat1 = 51,
  aux_sym_function_repeat2 = 52,
  aux_sym_result_types_repeat1 = 53,
  aux_sym_instruction_repeat1 = 54,
  aux_sym_instruction_repeat2 = 55,
  aux_sym_operand_list_repeat1 = 56,
  aux_sym_attributes_repeat1 = 57,
  aux_sym_list_repeat1 = 58,
  aux_sym_tensor_type_repeat1 = 59,
  aux_sym_tensor_type_repeat2 = 60,
  alias_sym_dtype = 61,
};

static const char * const ts_symbol_names[] = {
  [ts_builtin_sym_end] = "end",
  [sym_identifier] = "identifier",
  [sym_comment] = "comment",
  [anon_sym_func] = "func",
  [anon_sym_LPAREN] = "(",
  [anon_sym_COMMA] = ",",
  [anon_sym_RPAREN] = ")",
  [anon_sym_DASH_GT] = "->",
  [anon_sym_LBRACE] = "{",
  [anon_sym_RBRACE] = "}",
  [sym_function_name] = "function_name",
  [sym_value] = "value",
  [anon_sym_COLON] = ":",
  [anon_sym_EQ] = "=",
  [anon_sym_return] = "return",
  [sym_none] = "none",
  [anon_sym_LBRACK] = "[",
  [anon_sym_RBRACK] = "]",
  [sym_integer] = "integer",
  [sym_float] = "float",
  [anon_sym_true] = "true",
  [anon_sym_false] = "false",
  [anon_sym_complex] = "complex",
  [sym_string] = "string",
  [sym_device] = "device",
  [anon_sym_tensor] = "tensor",
  [anon_sym_LT] = "<",
  [anon_sym_GT] = ">",
  [sym_dim] = "dim",
  [anon_sym_strides] = "strides",
  [sym_source_file] = "source_file",
  [sym_function] = "function",
  [sym_parameter] = "parameter",
  [sym_result_types] = "result_types",
  [sym_instruction] = "instruction",
  [sym_op_name] = "op_name",
  [sym_return] = "return",
  [sym__operand] = "_operand",
  [sym_operand_list] = "operand_list",
  [sym__literal] = "_literal",
  [sym_boolean] = "boolean",
  [sym_complex] = "complex",
  [sym_attributes] = "attributes",
  [sym_attribute] = "attribute",
  [sym_attribute_name] = "attribute_name",
  [sym__attribute_value] = "_attribute_value",
  [sym_constant] = "constant",
  [sym_list] = "list",
  [sym_tensor_type] = "tensor_type",
  [sym_type_attribute] = "type_attribute",
  [aux_sym_source_file_repeat1] = "source_file_repeat1",
  [aux_sym_function_repeat1] = "function_repeat1",
  [aux_sym_function_repeat2] = "function_repeat2",
  [aux_sym_result_types_repeat1] = "result_types_repeat1",
  [aux_sym_instruction_repeat1] = "instruction_repeat1",
  [aux_sym_instruction_repeat2] = "instruction_repeat2",
  [aux_sym_operand_list_repeat1] = "operand_list_repeat1",
  [aux_sym_attributes_repeat1] = "attributes_repeat1",
  [aux_sym_list_repeat1] = "list_repeat1",
  [aux_sym_tensor_type_repeat1] = "tensor_type_repeat1",
  [aux_sym_tensor_type_repeat2] = "tensor_type_repeat2",
  [alias_sym_dtype] = "dtype",
};

static const TSSymbol ts_symbol_map[] = {
  [ts_builtin_sym_end] = ts_builtin_sym_end,
  [sym_identifier] = sym_identifier,
  [sym_comment] = sym_comment,
  [anon_sym_func] = anon_sym_func,
  [anon_sym_LPAREN] = anon_sym_LPAREN,
  [anon_sym_COMMA] = anon_sym_COMMA,
  [anon_sym_RPAREN] = anon_sym_RPAREN,
  [anon_sym_DASH_GT] = anon_sym_DASH_GT,
  [anon_sym_LBRACE] = anon_sym_LBRACE,
  [anon_sym_RBRACE] = anon_sym_RBRACE,
  [sym_function_name] = sym_function_name,
  [sym_value] = sym_value,
  [anon_sym_COLON] = anon_sym_COLON,
  [anon_sym_EQ] = anon_sym_EQ,
  [anon_sym_return] = anon_sym_return,
  [sym_none] = sym_none,
  [anon_sym_LBRACK] = anon_sym_LBRACK,
  [anon_sym_RBRACK] = anon_sym_RBRACK,
  [sym_integer] = sym_integer,
  [sym_float] = sym_float,
  [anon_sym_true] = anon_sym_true,
  [anon_sym_false] = anon_sym_false,
  [anon_sym_complex] = anon_sym_complex,
  [sym_string] = sym_string,
  [sym_device] = sym_device,
  [anon_sym_tensor] = anon_sym_tensor,
  [anon_sym_LT] = anon_sym_LT,
  [anon_sym_GT] = anon_sym_GT,
  [sym_dim] = sym_dim,
  [anon_sym_strides] = anon_sym_strides,
  [sym_source_file] = sym_source_file,
  [sym_function] = sym_function,
  [sym_parameter] = sym_parameter,
  [sym_result_types] = sym_result_types,
  [sym_instruction] = sym_instruction,
  [sym_op_name] = sym_op_name,
  [sym_return] = sym_return,
  [sym__operand] = sym__operand,
  [sym_operand_list] = sym_operand_list,
  [sym__literal] = sym__literal,
  [sym_boolean] = sym_boolean,
  [sym_complex] = sym_complex,
  [sym_attributes] = sym_attributes,
  [sym_attribute] = sym_attribute,
  [sym_attribute_name] = sym_attribute_name,
  [sym__attribute_value] = sym__attribute_value,
  [sym_constant] = sym_constant,
  [sym_list] = sym_list,
  [sym_tensor_type] = sym_tensor_type,
  [sym_type_attribute] = sym_type_attribute,
  [aux_sym_source_file_repeat1] = aux_sym_source_file_repeat1,
  [aux_sym_function_repeat1] = aux_sym_function_repeat1,
  [aux_sym_function_repeat2] = aux_sym_function_repeat2,
  [aux_sym_result_types_repeat1] = aux_sym_result_types_repeat1,
  [aux_sym_instruction_repeat1] = aux_sym_instruction_repeat1,
  [aux_sym_instruction_repeat2] = aux_sym_instruction_repeat2,
  [aux_sym_operand_list_repeat1] = aux_sym_operand_list_repeat1,
  [aux_sym_attributes_repeat1] = aux_sym_attributes_repeat1,
  [aux_sym_list_repeat1] = aux_sym_list_repeat1,
  [aux_sym_tensor_type_repeat1] = aux_sym_tensor_type_repeat1,
  [aux_sym_tensor_type_repeat2] = aux_sym_tensor_type_repeat2,
  [alias_sym_dtype] = alias_sym_dtype,
};

static const TSSymbolMetadata ts_symbol_metadata[] = {
  [ts_builtin_sym_end] = {
    .visible = false,
    .named = true,
  },
  [sym_identifier] = {
    .visible = true,
    .named = true,
  },
  [sym_comment] = {
    .visible = true,
    .named = true,
  },
  [anon_sym_func] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_LPAREN] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_COMMA] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_RPAREN] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_DASH_GT] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_LBRACE] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_RBRACE] = {
    .visible = true,
    .named = false,
  },
  [sym_function_name] = {
    .visible = true,
    .named = true,
  },
  [sym_value] = {
    .visible = true,
    .named = true,
  },
  [anon_sym_COLON] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_EQ] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_return] = {
    .visible = true,
    .named = false,
  },
  [sym_none] = {
    .visible = true,
    .named = true,
  },
  [anon_sym_LBRACK] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_RBRACK] = {
    .visible = true,
    .named = false,
  },
  [sym_integer] = {
    .visible = true,
    .named = true,
  },
  [sym_float] = {
    .visible = true,
    .named = true,
  },
  [anon_sym_true] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_false] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_complex] = {
    .visible = true,
    .named = false,
  },
  [sym_string] = {
    .visible = true,
    .named = true,
  },
  [sym_device] = {
    .visible = true,
    .named = true,
  },
  [anon_sym_tensor] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_LT] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_GT] = {
    .visible = true,
    .named = false,
  },
  [sym_dim] = {
    .visible = true,
    .named = true,
  },
  [anon_sym_strides] = {
    .visible = true,
    .named = false,
  },
  [sym_source_file] = {
    .visible = true,
    .named = true,
  },
  [sym_function] = {
    .visible = true,
    .named = true,
  },
  [sym_parameter] = {
    .visible = true,
    .named = true,
  },
  [sym_result_types] = {
    .visible = true,
    .named = true,
  },
  [sym_instruction] = {
    .visible = true,
    .named = true,
  },
  [sym_op_name] = {
    .visible = true,
    .named = true,
  },
  [sym_return] = {
    .visible = true,
    .named = true,
  },
  [sym__operand] = {
    .visible = false,
    .named = true,
  },
  [sym_operand_list] = {
    .visible = true,
    .named = true,
  },
  [sym__literal] = {
    .visible = false,
    .named = true,
  },
  [sym_boolean] = {
    .visible = true,
    .named = true,
  },
  [sym_complex] = {
    .visible = true,
    .named = true,
  },
  [sym_attributes] = {
    .visible = true,
    .named = true,
  },
  [sym_attribute] = {
    .visible = true,
    .named = true,
  },
  [sym_attribute_name] = {
    .visible = true,
    .named = true,
  },
  [sym__attribute_value] = {
    .visible = false,
    .named = true,
  },
  [sym_constant] = {
    .visible = true,
    .named = true,
  },
  [sym_list] = {
    .visible = true,
    .named = true,
  },
  [sym_tensor_type] = {
    .visible = true,
    .named = true,
  },
  [sym_type_attribute] = {
    .visible = true,
    .named = true,
  },
  [aux_sym_source_file_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_function_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_function_repeat2] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_result_types_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_instruction_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_instruction_repeat2] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_operand_list_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_attributes_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_list_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_tensor_type_repeat1] = {
    .visible = false,
    .named = false,
  },
  [aux_sym_tensor_type_repeat2] = {
    .visible = false,
    .named = false,
  },
  [alias_sym_dtype] = {
    .visible = true,
    .named = true,
  },
};

static const TSSymbol ts_alias_sequences[PRODUCTION_ID_COUNT][MAX_ALIAS_SEQUENCE_LENGTH] = {
  [0] = {0},
  [1] = {
    [2] = alias_sym_dtype,
  },
  [2] = {
    [3] = alias_sym_dtype,
  },
};

static const uint16_t ts_non_terminal_alias_map[] = {
  0,
};

static const TSStateId ts_primary_state_ids[STATE_COUNT] = {
  [0] = 0,
  [1] = 1,
  [2] = 2,
  [3] = 3,
  [4] = 4,
  [5] = 5,
  [6] = 6,
  [7] = 7,
  [8] = 8,
  [9] = 9,
  [10] = 10,
  [11] = 11,
  [12] = 12,
  [13] = 13,
  [14] = 14,
  [15] = 15,
  [16] = 16,
  [17] = 17,
  [18] = 18,
  [19] = 19,
  [20] = 20,
  [21] = 21,
  [22] = 22,
  [23] = 23,
  [24] = 24,
  [25] = 25,
  [26] = 26,
  [27] = 27,
  [28] = 28,
  [29] = 29,
  [30] = 30,
  [31] = 31,
  [32] = 32,
  [33] = 33,
  [34] = 34,
  [35] = 35,
  [36] = 36,
  [37] = 37,
  [38] = 38,
  [39] = 39,
  [40] = 40,
  [41] = 41,
  [42] = 42,
  [43] = 43,
  [44] = 44,
  [45] = 45,
  [46] = 46,
  [47] = 47,
  [48] = 48,
  [49] = 49,
  [50] = 50,
  [51] = 51,
  [52] = 52,
  [53] = 53,
  [54] = 54,
  [55] = 55,
  [56] = 56,
  [57] = 57,
  [58] = 58,
  [59] = 59,
  [60] = 60,
  [61] = 61,
  [62] = 62,
  [63] = 63,
  [64] = 64,
  [65] = 65,
  [66] = 66,
  [67] = 67,
  [68] = 68,
  [69] = 69,
  [70] = 70,
  [71] = 71,
  [72] = 72,
  [73] = 73,
  [74] = 74,
  [75] = 75,
  [76] = 76,
  [77] = 77,
  [78] = 78,
  [79] = 79,
  [80] = 80,
  [81] = 81,
  [82] = 82,
  [83] = 83,
  [84] = 84,
  [85] = 85,
  [86] = 86,
  [87] = 87,
  [88] = 88,
  [89] = 89,
  [90] = 90,
  [91] = 91,
  [92] = 92,
  [93] = 93,
  [94] = 94,
  [95] = 95,
  [96] = 96,
  [97] = 97,
  [98] = 98,
  [99] = 99,
  [100] = 100,
  [101] = 101,
  [102] = 102,
  [103] = 103,
  [104] = 104,
  [105] = 105,
  [106] = 106,
  [107] = 107,
  [108] = 108,
  [109] = 109,
  [110] = 110,
  [111] = 111,
  [112] = 112,
  [113] = 113,
  [114] = 114,
  [115] = 115,
  [116] = 116,
  [117] = 117,
  [118] = 118,
  [119] = 119,
  [120] = 120,
  [121] = 121,
  [122] = 122,
  [123] = 123,
  [124] = 124,
  [125] = 125,
  [126] = 126,
  [127] = 127,
  [128] = 128,
  [129] = 129,
  [130] = 130,
  [131] = 131,
  [132] = 132,
  [133] = 133,
  [134] = 134,
  [135] = 135,
  [136] = 136,
  [137] = 137,
  [138] = 138,
  [139] = 139,
  [140] = 140,
  [141] = 141,
};

static bool ts_lex(TSLexer *lexer, TSStateId state) {
  START_LEXER();
  eof = lexer->eof(lexer);
  switch (state) {
    case 0:
      if (eof) ADVANCE(39);
      ADVANCE_MAP(
        '"', 2,
        '%', 36,
        '(', 41,
        ')', 43,
        ',', 42,
        '-', 6,
        '/', 5,
        ':', 92,
        '<', 116,
        '=', 93,
        '>', 117,
        '@', 37,
        '[', 98,
        ']', 99,
        'c', 82,
        'f', 67,
        'i', 79,
        'n', 68,
        'r', 69,
        't', 84,
        '{', 45,
        '}', 46,
      );
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(0);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(100);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 1:
      ADVANCE_MAP(
        '"', 2,
        '%', 36,
        '-', 15,
        '/', 5,
        '[', 98,
        'c', 60,
        'f', 49,
        'i', 59,
        'n', 50,
        't', 62,
      );
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(1);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(101);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 2:
      if (lookahead == '"') ADVANCE(114);
      if (lookahead != 0 &&
          lookahead != '\n') ADVANCE(2);
      END_STATE();
    case 3:
      ADVANCE_MAP(
        '%', 36,
        ')', 43,
        ',', 42,
        '-', 15,
        '/', 5,
        ':', 92,
        '[', 98,
        ']', 99,
        'c', 23,
        'f', 7,
        'i', 19,
        'n', 8,
        'r', 9,
        't', 25,
        '{', 45,
        '}', 46,
      );
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(3);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(101);
      END_STATE();
    case 4:
      if (lookahead == '/') ADVANCE(5);
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(4);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 5:
      if (lookahead == '/') ADVANCE(40);
      END_STATE();
    case 6:
      if (lookahead == '>') ADVANCE(44);
      if (lookahead == 'i') ADVANCE(19);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(101);
      END_STATE();
    case 7:
      if (lookahead == 'a') ADVANCE(16);
      END_STATE();
    case 8:
      if (lookahead == 'a') ADVANCE(20);
      if (lookahead == 'o') ADVANCE(22);
      END_STATE();
    case 9:
      if (lookahead == 'e') ADVANCE(28);
      END_STATE();
    case 10:
      if (lookahead == 'e') ADVANCE(96);
      END_STATE();
    case 11:
      if (lookahead == 'e') ADVANCE(105);
      END_STATE();
    case 12:
      if (lookahead == 'e') ADVANCE(108);
      END_STATE();
    case 13:
      if (lookahead == 'e') ADVANCE(32);
      END_STATE();
    case 14:
      if (lookahead == 'f') ADVANCE(102);
      END_STATE();
    case 15:
      if (lookahead == 'i') ADVANCE(19);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(101);
      END_STATE();
    case 16:
      if (lookahead == 'l') ADVANCE(27);
      END_STATE();
    case 17:
      if (lookahead == 'l') ADVANCE(13);
      END_STATE();
    case 18:
      if (lookahead == 'm') ADVANCE(24);
      END_STATE();
    case 19:
      if (lookahead == 'n') ADVANCE(14);
      END_STATE();
    case 20:
      if (lookahead == 'n') ADVANCE(102);
      END_STATE();
    case 21:
      if (lookahead == 'n') ADVANCE(94);
      END_STATE();
    case 22:
      if (lookahead == 'n') ADVANCE(10);
      END_STATE();
    case 23:
      if (lookahead == 'o') ADVANCE(18);
      END_STATE();
    case 24:
      if (lookahead == 'p') ADVANCE(17);
      END_STATE();
    case 25:
      if (lookahead == 'r') ADVANCE(30);
      END_STATE();
    case 26:
      if (lookahead == 'r') ADVANCE(21);
      END_STATE();
    case 27:
      if (lookahead == 's') ADVANCE(12);
      END_STATE();
    case 28:
      if (lookahead == 't') ADVANCE(29);
      END_STATE();
    case 29:
      if (lookahead == 'u') ADVANCE(26);
      END_STATE();
    case 30:
      if (lookahead == 'u') ADVANCE(11);
      END_STATE();
    case 31:
      if (lookahead == 'x') ADVANCE(118);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(31);
      END_STATE();
    case 32:
      if (lookahead == 'x') ADVANCE(111);
      END_STATE();
    case 33:
      if (lookahead == '+' ||
          lookahead == '-') ADVANCE(34);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(104);
      END_STATE();
    case 34:
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(104);
      END_STATE();
    case 35:
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(115);
      END_STATE();
    case 36:
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(48);
      END_STATE();
    case 37:
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(47);
      END_STATE();
    case 38:
      if (eof) ADVANCE(39);
      if (lookahead == '(') ADVANCE(41);
      if (lookahead == ')') ADVANCE(43);
      if (lookahead == '/') ADVANCE(5);
      if (lookahead == '}') ADVANCE(46);
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(38);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(31);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 39:
      ACCEPT_TOKEN(ts_builtin_sym_end);
      END_STATE();
    case 40:
      ACCEPT_TOKEN(sym_comment);
      if (lookahead != 0 &&
          lookahead != '\n') ADVANCE(40);
      END_STATE();
    case 41:
      ACCEPT_TOKEN(anon_sym_LPAREN);
      END_STATE();
    case 42:
      ACCEPT_TOKEN(anon_sym_COMMA);
      END_STATE();
    case 43:
      ACCEPT_TOKEN(anon_sym_RPAREN);
      END_STATE();
    case 44:
      ACCEPT_TOKEN(anon_sym_DASH_GT);
      END_STATE();
    case 45:
      ACCEPT_TOKEN(anon_sym_LBRACE);
      END_STATE();
    case 46:
      ACCEPT_TOKEN(anon_sym_RBRACE);
      END_STATE();
    case 47:
      ACCEPT_TOKEN(sym_function_name);
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(47);
      END_STATE();
    case 48:
      ACCEPT_TOKEN(sym_value);
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(48);
      END_STATE();
    case 49:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'a') ADVANCE(55);
      if (('b' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 50:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'a') ADVANCE(58);
      if (('b' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 51:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'e') ADVANCE(106);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 52:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'e') ADVANCE(109);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 53:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'e') ADVANCE(65);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 54:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'f') ADVANCE(66);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 55:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'l') ADVANCE(63);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 56:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'l') ADVANCE(53);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 57:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'm') ADVANCE(61);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 58:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'n') ADVANCE(66);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 59:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'n') ADVANCE(54);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 60:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'o') ADVANCE(57);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 61:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'p') ADVANCE(56);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 62:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'r') ADVANCE(64);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 63:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 's') ADVANCE(52);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 64:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'u') ADVANCE(51);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 65:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (lookahead == 'x') ADVANCE(112);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 66:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(35);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 67:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'a') ADVANCE(75);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('b' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 68:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'a') ADVANCE(78);
      if (lookahead == 'o') ADVANCE(81);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('b' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 69:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'e') ADVANCE(87);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 70:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'e') ADVANCE(97);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 71:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'e') ADVANCE(107);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 72:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'e') ADVANCE(110);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 73:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'e') ADVANCE(90);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 74:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'f') ADVANCE(91);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 75:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'l') ADVANCE(86);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 76:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'l') ADVANCE(73);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 77:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'm') ADVANCE(83);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 78:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'n') ADVANCE(91);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 79:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'n') ADVANCE(74);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 80:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'n') ADVANCE(95);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 81:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'n') ADVANCE(70);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 82:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'o') ADVANCE(77);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 83:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'p') ADVANCE(76);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 84:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'r') ADVANCE(89);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 85:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'r') ADVANCE(80);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 86:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 's') ADVANCE(72);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 87:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 't') ADVANCE(88);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 88:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'u') ADVANCE(85);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 89:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'u') ADVANCE(71);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 90:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == 'x') ADVANCE(113);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 91:
      ACCEPT_TOKEN(sym_identifier);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 92:
      ACCEPT_TOKEN(anon_sym_COLON);
      END_STATE();
    case 93:
      ACCEPT_TOKEN(anon_sym_EQ);
      END_STATE();
    case 94:
      ACCEPT_TOKEN(anon_sym_return);
      END_STATE();
    case 95:
      ACCEPT_TOKEN(anon_sym_return);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 96:
      ACCEPT_TOKEN(sym_none);
      END_STATE();
    case 97:
      ACCEPT_TOKEN(sym_none);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 98:
      ACCEPT_TOKEN(anon_sym_LBRACK);
      END_STATE();
    case 99:
      ACCEPT_TOKEN(anon_sym_RBRACK);
      END_STATE();
    case 100:
      ACCEPT_TOKEN(sym_integer);
      if (lookahead == '.') ADVANCE(103);
      if (lookahead == 'x') ADVANCE(118);
      if (lookahead == 'E' ||
          lookahead == 'e') ADVANCE(33);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(100);
      END_STATE();
    case 101:
      ACCEPT_TOKEN(sym_integer);
      if (lookahead == '.') ADVANCE(103);
      if (lookahead == 'E' ||
          lookahead == 'e') ADVANCE(33);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(101);
      END_STATE();
    case 102:
      ACCEPT_TOKEN(sym_float);
      END_STATE();
    case 103:
      ACCEPT_TOKEN(sym_float);
      if (lookahead == 'E' ||
          lookahead == 'e') ADVANCE(33);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(103);
      END_STATE();
    case 104:
      ACCEPT_TOKEN(sym_float);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(104);
      END_STATE();
    case 105:
      ACCEPT_TOKEN(anon_sym_true);
      END_STATE();
    case 106:
      ACCEPT_TOKEN(anon_sym_true);
      if (lookahead == ':') ADVANCE(35);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 107:
      ACCEPT_TOKEN(anon_sym_true);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 108:
      ACCEPT_TOKEN(anon_sym_false);
      END_STATE();
    case 109:
      ACCEPT_TOKEN(anon_sym_false);
      if (lookahead == ':') ADVANCE(35);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 110:
      ACCEPT_TOKEN(anon_sym_false);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 111:
      ACCEPT_TOKEN(anon_sym_complex);
      END_STATE();
    case 112:
      ACCEPT_TOKEN(anon_sym_complex);
      if (lookahead == ':') ADVANCE(35);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(66);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(91);
      END_STATE();
    case 113:
      ACCEPT_TOKEN(anon_sym_complex);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(91);
      END_STATE();
    case 114:
      ACCEPT_TOKEN(sym_string);
      END_STATE();
    case 115:
      ACCEPT_TOKEN(sym_device);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(115);
      END_STATE();
    case 116:
      ACCEPT_TOKEN(anon_sym_LT);
      END_STATE();
    case 117:
      ACCEPT_TOKEN(anon_sym_GT);
      END_STATE();
    case 118:
      ACCEPT_TOKEN(sym_dim);
      END_STATE();
    default:
      return false;
  }
}

static bool ts_lex_keywords(TSLexer *lexer, TSStateId state) {
  START_LEXER();
  eof = lexer->eof(lexer);
  switch (state) {
    case 0:
      if (lookahead == 'f') ADVANCE(1);
      if (lookahead == 's') ADVANCE(2);
      if (lookahead == 't') ADVANCE(3);
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(0);
      END_STATE();
    case 1:
      if (lookahead == 'u') ADVANCE(4);
      END_STATE();
    case 2:
      if (lookahead == 't') ADVANCE(5);
      END_STATE();
    case 3:
      if (lookahead == 'e') ADVANCE(6);
      END_STATE();
    case 4:
      if (lookahead == 'n') ADVANCE(7);
      END_STATE();
    case 5:
      if (lookahead == 'r') ADVANCE(8);
      END_STATE();
    case 6:
      if (lookahead == 'n') ADVANCE(9);
      END_STATE();
    case 7:
      if (lookahead == 'c') ADVANCE(10);
      END_STATE();
    case 8:
      if (lookahead == 'i') ADVANCE(11);
      END_STATE();
    case 9:
      if (lookahead == 's') ADVANCE(12);
      END_STATE();
    case 10:
      ACCEPT_TOKEN(anon_sym_func);
      END_STATE();
    case 11:
      if (lookahead == 'd') ADVANCE(13);
      END_STATE();
    case 12:
      if (lookahead == 'o') ADVANCE(14);
      END_STATE();
    case 13:
      if (lookahead == 'e') ADVANCE(15);
      END_STATE();
    case 14:
      if (lookahead == 'r') ADVANCE(16);
      END_STATE();
    case 15:
      if (lookahead == 's') ADVANCE(17);
      END_STATE();
    case 16:
      ACCEPT_TOKEN(anon_sym_tensor);
      END_STATE();
    case 17:
      ACCEPT_TOKEN(anon_sym_strides);
      END_STATE();
    default:
      return false;
  }
}

static const TSLexMode ts_lex_modes[STATE_COUNT] = {
  [0] = {.lex_state = 0},
  [1] = {.lex_state = 38},
  [2] = {.lex_state = 3},
  [3] = {.lex_state = 3},
  [4] = {.lex_state = 1},
  [5] = {.lex_state = 3},
  [6] = {.lex_state = 3},
  [7] = {.lex_state = 3},
  [8] = {.lex_state = 3},
  [9] = {.lex_state = 3},
  [10] = {.lex_state = 3},
  [11] = {.lex_state = 3},
  [12] = {.lex_state = 3},
  [13] = {.lex_state = 3},
  [14] = {.lex_state = 3},
  [15] = {.lex_state = 3},
  [16] = {.lex_state = 3},
  [17] = {.lex_state = 3},
  [18] = {.lex_state = 3},
  [19] = {.lex_state = 3},
  [20] = {.lex_state = 3},
  [21] = {.lex_state = 3},
  [22] = {.lex_state = 3},
  [23] = {.lex_state = 3},
  [24] = {.lex_state = 3},
  [25] = {.lex_state = 3},
  [26] = {.lex_state = 3},
  [27] = {.lex_state = 3},
  [28] = {.lex_state = 38},
  [29] = {.lex_state = 3},
  [30] = {.lex_state = 4},
  [31] = {.lex_state = 38},
  [32] = {.lex_state = 0},
  [33] = {.lex_state = 38},
  [34] = {.lex_state = 38},
  [35] = {.lex_state = 38},
  [36] = {.lex_state = 38},
  [37] = {.lex_state = 3},
  [38] = {.lex_state = 0},
  [39] = {.lex_state = 0},
  [40] = {.lex_state = 0},
  [41] = {.lex_state = 0},
  [42] = {.lex_state = 3},
  [43] = {.lex_state = 0},
  [44] = {.lex_state = 0},
  [45] = {.lex_state = 3},
  [46] = {.lex_state = 0},
  [47] = {.lex_state = 3},
  [48] = {.lex_state = 0},
  [49] = {.lex_state = 0},
  [50] = {.lex_state = 38},
  [51] = {.lex_state = 0},
  [52] = {.lex_state = 3},
  [53] = {.lex_state = 0},
  [54] = {.lex_state = 38},
  [55] = {.lex_state = 0},
  [56] = {.lex_state = 0},
  [57] = {.lex_state = 38},
  [58] = {.lex_state = 3},
  [59] = {.lex_state = 0},
  [60] = {.lex_state = 0},
  [61] = {.lex_state = 0},
  [62] = {.lex_state = 0},
  [63] = {.lex_state = 0},
  [64] = {.lex_state = 3},
  [65] = {.lex_state = 0},
  [66] = {.lex_state = 0},
  [67] = {.lex_state = 0},
  [68] = {.lex_state = 0},
  [69] = {.lex_state = 0},
  [70] = {.lex_state = 0},
  [71] = {.lex_state = 0},
  [72] = {.lex_state = 38},
  [73] = {.lex_state = 0},
  [74] = {.lex_state = 3},
  [75] = {.lex_state = 0},
  [76] = {.lex_state = 0},
  [77] = {.lex_state = 0},
  [78] = {.lex_state = 38},
  [79] = {.lex_state = 0},
  [80] = {.lex_state = 38},
  [81] = {.lex_state = 3},
  [82] = {.lex_state = 0},
  [83] = {.lex_state = 3},
  [84] = {.lex_state = 38},
  [85] = {.lex_state = 38},
  [86] = {.lex_state = 3},
  [87] = {.lex_state = 0},
  [88] = {.lex_state = 38},
  [89] = {.lex_state = 38},
  [90] = {.lex_state = 38},
  [91] = {.lex_state = 38},
  [92] = {.lex_state = 0},
  [93] = {.lex_state = 0},
  [94] = {.lex_state = 3},
  [95] = {.lex_state = 3},
  [96] = {.lex_state = 38},
  [97] = {.lex_state = 0},
  [98] = {.lex_state = 38},
  [99] = {.lex_state = 0},
  [100] = {.lex_state = 0},
  [101] = {.lex_state = 38},
  [102] = {.lex_state = 0},
  [103] = {.lex_state = 0},
  [104] = {.lex_state = 0},
  [105] = {.lex_state = 3},
  [106] = {.lex_state = 3},
  [107] = {.lex_state = 38},
  [108] = {.lex_state = 0},
  [109] = {.lex_state = 0},
  [110] = {.lex_state = 38},
  [111] = {.lex_state = 3},
  [112] = {.lex_state = 38},
  [113] = {.lex_state = 0},
  [114] = {.lex_state = 3},
  [115] = {.lex_state = 0},
  [116] = {.lex_state = 0},
  [117] = {.lex_state = 0},
  [118] = {.lex_state = 0},
  [119] = {.lex_state = 3},
  [120] = {.lex_state = 0},
  [121] = {.lex_state = 0},
  [122] = {.lex_state = 0},
  [123] = {.lex_state = 0},
  [124] = {.lex_state = 0},
  [125] = {.lex_state = 0},
  [126] = {.lex_state = 0},
  [127] = {.lex_state = 0},
  [128] = {.lex_state = 0},
  [129] = {.lex_state = 0},
  [130] = {.lex_state = 0},
  [131] = {.lex_state = 0},
  [132] = {.lex_state = 0},
  [133] = {.lex_state = 0},
  [134] = {.lex_state = 0},
  [135] = {.lex_state = 0},
  [136] = {.lex_state = 0},
  [137] = {.lex_state = 0},
  [138] = {.lex_state = 0},
  [139] = {.lex_state = 0},
  [140] = {.lex_state = 0},
  [141] = {.lex_state = 0},
};

static const uint16_t ts_parse_table[LARGE_STATE_COUNT][SYMBOL_COUNT] = {
  [0] = {
    [ts_builtin_sym_end] = ACTIONS(1),
    [sym_identifier] = ACTIONS(1),
    [sym_comment] = ACTIONS(3),
    [anon_sym_func] = ACTIONS(1),
    [anon_sym_LPAREN] = ACTIONS(1),
    [anon_sym_COMMA] = ACTIONS(1),
    [anon_sym_RPAREN] = ACTIONS(1),
    [anon_sym_DASH_GT] = ACTIONS(1),
    [anon_sym_LBRACE] = ACTIONS(1),
    [anon_sym_RBRACE] = ACTIONS(1),
    [sym_function_name] = ACTIONS(1),
    [sym_value] = ACTIONS(1),
    [anon_sym_COLON] = ACTIONS(1),
    [anon_sym_EQ] = ACTIONS(1),
    [anon_sym_return] = ACTIONS(1),
    [sym_none] = ACTIONS(1),
    [anon_sym_LBRACK] = ACTIONS(1),
    [anon_sym_RBRACK] = ACTIONS(1),
    [sym_integer] = ACTIONS(1),
    [sym_float] = ACTIONS(1),
    [anon_sym_true] = ACTIONS(1),
    [anon_sym_false] = ACTIONS(1),
    [anon_sym_complex] = ACTIONS(1),
    [sym_string] = ACTIONS(1),
    [anon_sym_tensor] = ACTIONS(1),
    [anon_sym_LT] = ACTIONS(1),
    [anon_sym_GT] = ACTIONS(1),
    [sym_dim] = ACTIONS(1),
    [anon_sym_strides] = ACTIONS(1),
  },
  [1] = {
    [sym_source_file] = STATE(139),
    [sym_function] = STATE(34),
    [aux_sym_source_file_repeat1] = STATE(34),
    [ts_builtin_sym_end] = ACTIONS(5),
    [sym_comment] = ACTIONS(3),
    [anon_sym_func] = ACTIONS(7),
  },
};

static const uint16_t ts_small_parse_table[] = {
  [0] = 11,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(9), 1,
      anon_sym_LBRACE,
    ACTIONS(13), 1,
      anon_sym_COLON,
    ACTIONS(15), 1,
      anon_sym_return,
    ACTIONS(17), 1,
      anon_sym_LBRACK,
    ACTIONS(19), 1,
      sym_integer,
    ACTIONS(23), 1,
      anon_sym_complex,
    STATE(45), 1,
      sym_attributes,
    ACTIONS(21), 2,
      anon_sym_true,
      anon_sym_false,
    ACTIONS(11), 3,
      sym_value,
      sym_none,
      sym_float,
    STATE(7), 5,
      sym__operand,
      sym_operand_list,
      sym__literal,
      sym_boolean,
      sym_complex,
  [41] = 11,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(9), 1,
      anon_sym_LBRACE,
    ACTIONS(17), 1,
      anon_sym_LBRACK,
    ACTIONS(23), 1,
      anon_sym_complex,
    ACTIONS(27), 1,
      anon_sym_COLON,
    ACTIONS(29), 1,
      anon_sym_return,
    ACTIONS(31), 1,
      sym_integer,
    STATE(52), 1,
      sym_attributes,
    ACTIONS(21), 2,
      anon_sym_true,
      anon_sym_false,
    ACTIONS(25), 3,
      sym_value,
      sym_none,
      sym_float,
    STATE(9), 5,
      sym__operand,
      sym_operand_list,
      sym__literal,
      sym_boolean,
      sym_complex,
  [82] = 8,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(33), 1,
      sym_identifier,
    ACTIONS(37), 1,
      anon_sym_LBRACK,
    ACTIONS(43), 1,
      anon_sym_complex,
    ACTIONS(39), 2,
      sym_integer,
      sym_float,
    ACTIONS(41), 2,
      anon_sym_true,
      anon_sym_false,
    ACTIONS(35), 3,
      sym_value,
      sym_string,
      sym_device,
    STATE(103), 6,
      sym__literal,
      sym_boolean,
      sym_complex,
      sym__attribute_value,
      sym_constant,
      sym_list,
  [116] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(17), 1,
      anon_sym_LBRACK,
    ACTIONS(23), 1,
      anon_sym_complex,
    ACTIONS(47), 1,
      sym_integer,
    ACTIONS(21), 2,
      anon_sym_true,
      anon_sym_false,
    ACTIONS(45), 3,
      sym_value,
      sym_none,
      sym_float,
    STATE(23), 5,
      sym__operand,
      sym_operand_list,
      sym__literal,
      sym_boolean,
      sym_complex,
  [145] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(51), 1,
      sym_integer,
    ACTIONS(49), 10,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
      sym_none,
      anon_sym_LBRACK,
      sym_float,
      anon_sym_true,
      anon_sym_false,
      anon_sym_complex,
  [164] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(9), 1,
      anon_sym_LBRACE,
    ACTIONS(27), 1,
      anon_sym_COLON,
    ACTIONS(53), 1,
      anon_sym_COMMA,
    STATE(8), 1,
      aux_sym_instruction_repeat2,
    STATE(52), 1,
      sym_attributes,
    ACTIONS(29), 2,
      sym_value,
      anon_sym_return,
  [187] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(9), 1,
      anon_sym_LBRACE,
    ACTIONS(53), 1,
      anon_sym_COMMA,
    ACTIONS(57), 1,
      anon_sym_COLON,
    STATE(12), 1,
      aux_sym_instruction_repeat2,
    STATE(64), 1,
      sym_attributes,
    ACTIONS(55), 2,
      sym_value,
      anon_sym_return,
  [210] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(9), 1,
      anon_sym_LBRACE,
    ACTIONS(53), 1,
      anon_sym_COMMA,
    ACTIONS(57), 1,
      anon_sym_COLON,
    STATE(10), 1,
      aux_sym_instruction_repeat2,
    STATE(64), 1,
      sym_attributes,
    ACTIONS(55), 2,
      sym_value,
      anon_sym_return,
  [233] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(9), 1,
      anon_sym_LBRACE,
    ACTIONS(53), 1,
      anon_sym_COMMA,
    ACTIONS(61), 1,
      anon_sym_COLON,
    STATE(12), 1,
      aux_sym_instruction_repeat2,
    STATE(74), 1,
      sym_attributes,
    ACTIONS(59), 2,
      sym_value,
      anon_sym_return,
  [256] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(63), 6,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      anon_sym_RBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [268] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(65), 1,
      anon_sym_COMMA,
    STATE(12), 1,
      aux_sym_instruction_repeat2,
    ACTIONS(68), 4,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [284] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(70), 6,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      anon_sym_RBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [296] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(72), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [307] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(74), 1,
      sym_value,
    ACTIONS(76), 1,
      anon_sym_return,
    STATE(120), 1,
      sym_return,
    STATE(17), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [324] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(74), 1,
      sym_value,
    ACTIONS(76), 1,
      anon_sym_return,
    STATE(127), 1,
      sym_return,
    STATE(21), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [341] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(74), 1,
      sym_value,
    ACTIONS(76), 1,
      anon_sym_return,
    STATE(127), 1,
      sym_return,
    STATE(29), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [358] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(74), 1,
      sym_value,
    ACTIONS(76), 1,
      anon_sym_return,
    STATE(120), 1,
      sym_return,
    STATE(29), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [375] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(78), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [386] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(80), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [397] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(74), 1,
      sym_value,
    ACTIONS(76), 1,
      anon_sym_return,
    STATE(126), 1,
      sym_return,
    STATE(29), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [414] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(82), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [425] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(68), 5,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [436] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(84), 5,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [447] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(86), 5,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [458] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(74), 1,
      sym_value,
    ACTIONS(76), 1,
      anon_sym_return,
    STATE(118), 1,
      sym_return,
    STATE(18), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [475] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(88), 5,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [486] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(90), 1,
      ts_builtin_sym_end,
    ACTIONS(92), 1,
      anon_sym_func,
    STATE(28), 2,
      sym_function,
      aux_sym_source_file_repeat1,
  [500] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(95), 1,
      sym_value,
    ACTIONS(98), 1,
      anon_sym_return,
    STATE(29), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [514] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(100), 1,
      sym_identifier,
    ACTIONS(102), 1,
      sym_device,
    ACTIONS(104), 1,
      anon_sym_strides,
    STATE(93), 1,
      sym_type_attribute,
  [530] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(106), 1,
      anon_sym_LPAREN,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(121), 1,
      sym_tensor_type,
    STATE(141), 1,
      sym_result_types,
  [546] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(110), 1,
      anon_sym_COMMA,
    STATE(32), 1,
      aux_sym_instruction_repeat1,
    ACTIONS(113), 2,
      anon_sym_RBRACE,
      anon_sym_EQ,
  [560] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(115), 1,
      sym_identifier,
    ACTIONS(117), 1,
      anon_sym_RBRACE,
    STATE(48), 1,
      sym_attribute,
    STATE(123), 1,
      sym_attribute_name,
  [576] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(7), 1,
      anon_sym_func,
    ACTIONS(119), 1,
      ts_builtin_sym_end,
    STATE(28), 2,
      sym_function,
      aux_sym_source_file_repeat1,
  [590] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(106), 1,
      anon_sym_LPAREN,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(121), 1,
      sym_tensor_type,
    STATE(122), 1,
      sym_result_types,
  [606] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(106), 1,
      anon_sym_LPAREN,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(121), 1,
      sym_tensor_type,
    STATE(128), 1,
      sym_result_types,
  [622] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(121), 3,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [631] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(123), 1,
      anon_sym_COMMA,
    ACTIONS(125), 1,
      anon_sym_RBRACE,
    STATE(32), 1,
      aux_sym_instruction_repeat1,
  [644] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(127), 1,
      anon_sym_COMMA,
    ACTIONS(129), 1,
      anon_sym_RPAREN,
    STATE(61), 1,
      aux_sym_function_repeat1,
  [657] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(131), 1,
      anon_sym_COMMA,
    ACTIONS(134), 1,
      anon_sym_RPAREN,
    STATE(40), 1,
      aux_sym_result_types_repeat1,
  [670] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(136), 1,
      anon_sym_COMMA,
    ACTIONS(139), 1,
      anon_sym_RPAREN,
    STATE(41), 1,
      aux_sym_function_repeat1,
  [683] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(143), 1,
      anon_sym_RBRACK,
    ACTIONS(141), 2,
      sym_value,
      sym_none,
  [694] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(145), 1,
      anon_sym_COMMA,
    ACTIONS(147), 1,
      anon_sym_RPAREN,
    STATE(63), 1,
      aux_sym_result_types_repeat1,
  [707] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(149), 1,
      anon_sym_COMMA,
    ACTIONS(151), 1,
      anon_sym_GT,
    STATE(65), 1,
      aux_sym_tensor_type_repeat2,
  [720] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(27), 1,
      anon_sym_COLON,
    ACTIONS(29), 2,
      sym_value,
      anon_sym_return,
  [731] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(149), 1,
      anon_sym_COMMA,
    ACTIONS(153), 1,
      anon_sym_GT,
    STATE(69), 1,
      aux_sym_tensor_type_repeat2,
  [744] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(155), 3,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [753] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(157), 1,
      anon_sym_COMMA,
    ACTIONS(159), 1,
      anon_sym_RBRACE,
    STATE(59), 1,
      aux_sym_attributes_repeat1,
  [766] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(161), 1,
      anon_sym_COMMA,
    ACTIONS(163), 1,
      anon_sym_RBRACK,
    STATE(62), 1,
      aux_sym_operand_list_repeat1,
  [779] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(165), 1,
      sym_identifier,
    ACTIONS(167), 1,
      sym_dim,
    STATE(50), 1,
      aux_sym_tensor_type_repeat1,
  [792] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(123), 1,
      anon_sym_COMMA,
    ACTIONS(170), 1,
      anon_sym_EQ,
    STATE(32), 1,
      aux_sym_instruction_repeat1,
  [805] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(57), 1,
      anon_sym_COLON,
    ACTIONS(55), 2,
      sym_value,
      anon_sym_return,
  [816] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(123), 1,
      anon_sym_COMMA,
    ACTIONS(172), 1,
      anon_sym_RBRACE,
    STATE(38), 1,
      aux_sym_instruction_repeat1,
  [829] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(174), 1,
      sym_identifier,
    ACTIONS(176), 1,
      sym_dim,
    STATE(72), 1,
      aux_sym_tensor_type_repeat1,
  [842] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(178), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_GT,
  [851] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(180), 1,
      anon_sym_COMMA,
    ACTIONS(182), 1,
      anon_sym_RBRACK,
    STATE(68), 1,
      aux_sym_list_repeat1,
  [864] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    ACTIONS(184), 1,
      anon_sym_RPAREN,
    STATE(43), 1,
      sym_tensor_type,
  [877] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(186), 3,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [886] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(157), 1,
      anon_sym_COMMA,
    ACTIONS(188), 1,
      anon_sym_RBRACE,
    STATE(70), 1,
      aux_sym_attributes_repeat1,
  [899] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(190), 1,
      anon_sym_RPAREN,
    ACTIONS(192), 1,
      sym_value,
    STATE(39), 1,
      sym_parameter,
  [912] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(127), 1,
      anon_sym_COMMA,
    ACTIONS(194), 1,
      anon_sym_RPAREN,
    STATE(41), 1,
      aux_sym_function_repeat1,
  [925] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(161), 1,
      anon_sym_COMMA,
    ACTIONS(196), 1,
      anon_sym_RBRACK,
    STATE(73), 1,
      aux_sym_operand_list_repeat1,
  [938] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(145), 1,
      anon_sym_COMMA,
    ACTIONS(198), 1,
      anon_sym_RPAREN,
    STATE(40), 1,
      aux_sym_result_types_repeat1,
  [951] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(61), 1,
      anon_sym_COLON,
    ACTIONS(59), 2,
      sym_value,
      anon_sym_return,
  [962] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(200), 1,
      anon_sym_COMMA,
    ACTIONS(203), 1,
      anon_sym_GT,
    STATE(65), 1,
      aux_sym_tensor_type_repeat2,
  [975] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(149), 1,
      anon_sym_COMMA,
    ACTIONS(205), 1,
      anon_sym_GT,
    STATE(44), 1,
      aux_sym_tensor_type_repeat2,
  [988] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(207), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_GT,
  [997] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(180), 1,
      anon_sym_COMMA,
    ACTIONS(209), 1,
      anon_sym_RBRACK,
    STATE(76), 1,
      aux_sym_list_repeat1,
  [1010] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(149), 1,
      anon_sym_COMMA,
    ACTIONS(211), 1,
      anon_sym_GT,
    STATE(65), 1,
      aux_sym_tensor_type_repeat2,
  [1023] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(213), 1,
      anon_sym_COMMA,
    ACTIONS(216), 1,
      anon_sym_RBRACE,
    STATE(70), 1,
      aux_sym_attributes_repeat1,
  [1036] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(113), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_EQ,
  [1045] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(218), 1,
      sym_identifier,
    ACTIONS(220), 1,
      sym_dim,
    STATE(50), 1,
      aux_sym_tensor_type_repeat1,
  [1058] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(222), 1,
      anon_sym_COMMA,
    ACTIONS(225), 1,
      anon_sym_RBRACK,
    STATE(73), 1,
      aux_sym_operand_list_repeat1,
  [1071] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(229), 1,
      anon_sym_COLON,
    ACTIONS(227), 2,
      sym_value,
      anon_sym_return,
  [1082] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(231), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_GT,
  [1091] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(233), 1,
      anon_sym_COMMA,
    ACTIONS(236), 1,
      anon_sym_RBRACK,
    STATE(76), 1,
      aux_sym_list_repeat1,
  [1104] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(123), 1,
      anon_sym_COMMA,
    ACTIONS(238), 1,
      anon_sym_EQ,
    STATE(51), 1,
      aux_sym_instruction_repeat1,
  [1117] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(115), 1,
      sym_identifier,
    STATE(99), 1,
      sym_attribute,
    STATE(123), 1,
      sym_attribute_name,
  [1130] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(225), 2,
      anon_sym_COMMA,
      anon_sym_RBRACK,
  [1138] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(240), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1146] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(242), 1,
      anon_sym_RBRACK,
    ACTIONS(244), 1,
      sym_integer,
  [1156] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(246), 2,
      anon_sym_COMMA,
      anon_sym_GT,
  [1164] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(55), 2,
      sym_value,
      anon_sym_return,
  [1172] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(248), 1,
      sym_identifier,
    STATE(2), 1,
      sym_op_name,
  [1182] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(100), 1,
      sym_tensor_type,
  [1192] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(250), 1,
      sym_integer,
    ACTIONS(252), 1,
      sym_float,
  [1202] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(192), 1,
      sym_value,
    STATE(113), 1,
      sym_parameter,
  [1212] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(114), 1,
      sym_tensor_type,
  [1222] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(254), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1230] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(256), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1238] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(108), 1,
      sym_tensor_type,
  [1248] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(258), 2,
      anon_sym_COMMA,
      anon_sym_GT,
  [1256] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(203), 2,
      anon_sym_COMMA,
      anon_sym_GT,
  [1264] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(260), 2,
      sym_value,
      sym_none,
  [1272] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(262), 2,
      sym_value,
      anon_sym_return,
  [1280] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(106), 1,
      sym_tensor_type,
  [1290] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(264), 1,
      anon_sym_RBRACE,
    ACTIONS(266), 1,
      sym_value,
  [1300] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(248), 1,
      sym_identifier,
    STATE(3), 1,
      sym_op_name,
  [1310] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(216), 2,
      anon_sym_COMMA,
      anon_sym_RBRACE,
  [1318] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(268), 2,
      anon_sym_COMMA,
      anon_sym_RPAREN,
  [1326] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(270), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1334] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(272), 2,
      anon_sym_COMMA,
      anon_sym_RBRACE,
  [1342] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(274), 2,
      anon_sym_COMMA,
      anon_sym_RBRACE,
  [1350] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(37), 1,
      anon_sym_LBRACK,
    STATE(82), 1,
      sym_list,
  [1360] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(276), 1,
      sym_integer,
    ACTIONS(278), 1,
      sym_float,
  [1370] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(227), 2,
      sym_value,
      anon_sym_return,
  [1378] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(111), 1,
      sym_tensor_type,
  [1388] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(134), 2,
      anon_sym_COMMA,
      anon_sym_RPAREN,
  [1396] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(236), 2,
      anon_sym_COMMA,
      anon_sym_RBRACK,
  [1404] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(83), 1,
      sym_tensor_type,
  [1414] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(280), 2,
      sym_value,
      anon_sym_return,
  [1422] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(108), 1,
      anon_sym_tensor,
    STATE(95), 1,
      sym_tensor_type,
  [1432] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(139), 2,
      anon_sym_COMMA,
      anon_sym_RPAREN,
  [1440] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(59), 2,
      sym_value,
      anon_sym_return,
  [1448] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(282), 1,
      anon_sym_LBRACE,
  [1455] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(284), 1,
      anon_sym_LPAREN,
  [1462] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(286), 1,
      sym_value,
  [1469] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(288), 1,
      anon_sym_RBRACE,
  [1476] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(290), 1,
      sym_integer,
  [1483] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(292), 1,
      anon_sym_RBRACE,
  [1490] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(294), 1,
      anon_sym_LBRACE,
  [1497] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(296), 1,
      anon_sym_LBRACE,
  [1504] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(298), 1,
      anon_sym_EQ,
  [1511] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(300), 1,
      anon_sym_DASH_GT,
  [1518] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(302), 1,
      anon_sym_DASH_GT,
  [1525] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(304), 1,
      anon_sym_RBRACE,
  [1532] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(306), 1,
      anon_sym_RBRACE,
  [1539] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(308), 1,
      anon_sym_LBRACE,
  [1546] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(310), 1,
      anon_sym_EQ,
  [1553] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(312), 1,
      anon_sym_LPAREN,
  [1560] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(314), 1,
      anon_sym_COLON,
  [1567] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(316), 1,
      anon_sym_LBRACE,
  [1574] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(318), 1,
      sym_function_name,
  [1581] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(320), 1,
      anon_sym_DASH_GT,
  [1588] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(322), 1,
      anon_sym_LBRACE,
  [1595] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(324), 1,
      anon_sym_COMMA,
  [1602] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(326), 1,
      anon_sym_RPAREN,
  [1609] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(328), 1,
      anon_sym_LT,
  [1616] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(330), 1,
      ts_builtin_sym_end,
  [1623] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(332), 1,
      anon_sym_EQ,
  [1630] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(334), 1,
      anon_sym_LBRACE,
};

static const uint32_t ts_small_parse_table_map[] = {
  [SMALL_STATE(2)] = 0,
  [SMALL_STATE(3)] = 41,
  [SMALL_STATE(4)] = 82,
  [SMALL_STATE(5)] = 116,
  [SMALL_STATE(6)] = 145,
  [SMALL_STATE(7)] = 164,
  [SMALL_STATE(8)] = 187,
  [SMALL_STATE(9)] = 210,
  [SMALL_STATE(10)] = 233,
  [SMALL_STATE(11)] = 256,
  [SMALL_STATE(12)] = 268,
  [SMALL_STATE(13)] = 284,
  [SMALL_STATE(14)] = 296,
  [SMALL_STATE(15)] = 307,
  [SMALL_STATE(16)] = 324,
  [SMALL_STATE(17)] = 341,
  [SMALL_STATE(18)] = 358,
  [SMALL_STATE(19)] = 375,
  [SMALL_STATE(20)] = 386,
  [SMALL_STATE(21)] = 397,
  [SMALL_STATE(22)] = 414,
  [SMALL_STATE(23)] = 425,
  [SMALL_STATE(24)] = 436,
  [SMALL_STATE(25)] = 447,
  [SMALL_STATE(26)] = 458,
  [SMALL_STATE(27)] = 475,
  [SMALL_STATE(28)] = 486,
  [SMALL_STATE(29)] = 500,
  [SMALL_STATE(30)] = 514,
  [SMALL_STATE(31)] = 530,
  [SMALL_STATE(32)] = 546,
  [SMALL_STATE(33)] = 560,
  [SMALL_STATE(34)] = 576,
  [SMALL_STATE(35)] = 590,
  [SMALL_STATE(36)] = 606,
  [SMALL_STATE(37)] = 622,
  [SMALL_STATE(38)] = 631,
  [SMALL_STATE(39)] = 644,
  [SMALL_STATE(40)] = 657,
  [SMALL_STATE(41)] = 670,
  [SMALL_STATE(42)] = 683,
  [SMALL_STATE(43)] = 694,
  [SMALL_STATE(44)] = 707,
  [SMALL_STATE(45)] = 720,
  [SMALL_STATE(46)] = 731,
  [SMALL_STATE(47)] = 744,
  [SMALL_STATE(48)] = 753,
  [SMALL_STATE(49)] = 766,
  [SMALL_STATE(50)] = 779,
  [SMALL_STATE(51)] = 792,
  [SMALL_STATE(52)] = 805,
  [SMALL_STATE(53)] = 816,
  [SMALL_STATE(54)] = 829,
  [SMALL_STATE(55)] = 842,
  [SMALL_STATE(56)] = 851,
  [SMALL_STATE(57)] = 864,
  [SMALL_STATE(58)] = 877,
  [SMALL_STATE(59)] = 886,
  [SMALL_STATE(60)] = 899,
  [SMALL_STATE(61)] = 912,
  [SMALL_STATE(62)] = 925,
  [SMALL_STATE(63)] = 938,
  [SMALL_STATE(64)] = 951,
  [SMALL_STATE(65)] = 962,
  [SMALL_STATE(66)] = 975,
  [SMALL_STATE(67)] = 988,
  [SMALL_STATE(68)] = 997,
  [SMALL_STATE(69)] = 1010,
  [SMALL_STATE(70)] = 1023,
  [SMALL_STATE(71)] = 1036,
  [SMALL_STATE(72)] = 1045,
  [SMALL_STATE(73)] = 1058,
  [SMALL_STATE(74)] = 1071,
  [SMALL_STATE(75)] = 1082,
  [SMALL_STATE(76)] = 1091,
  [SMALL_STATE(77)] = 1104,
  [SMALL_STATE(78)] = 1117,
  [SMALL_STATE(79)] = 1130,
  [SMALL_STATE(80)] = 1138,
  [SMALL_STATE(81)] = 1146,
  [SMALL_STATE(82)] = 1156,
  [SMALL_STATE(83)] = 1164,
  [SMALL_STATE(84)] = 1172,
  [SMALL_STATE(85)] = 1182,
  [SMALL_STATE(86)] = 1192,
  [SMALL_STATE(87)] = 1202,
  [SMALL_STATE(88)] = 1212,
  [SMALL_STATE(89)] = 1222,
  [SMALL_STATE(90)] = 1230,
  [SMALL_STATE(91)] = 1238,
  [SMALL_STATE(92)] = 1248,
  [SMALL_STATE(93)] = 1256,
  [SMALL_STATE(94)] = 1264,
  [SMALL_STATE(95)] = 1272,
  [SMALL_STATE(96)] = 1280,
  [SMALL_STATE(97)] = 1290,
  [SMALL_STATE(98)] = 1300,
  [SMALL_STATE(99)] = 1310,
  [SMALL_STATE(100)] = 1318,
  [SMALL_STATE(101)] = 1326,
  [SMALL_STATE(102)] = 1334,
  [SMALL_STATE(103)] = 1342,
  [SMALL_STATE(104)] = 1350,
  [SMALL_STATE(105)] = 1360,
  [SMALL_STATE(106)] = 1370,
  [SMALL_STATE(107)] = 1378,
  [SMALL_STATE(108)] = 1388,
  [SMALL_STATE(109)] = 1396,
  [SMALL_STATE(110)] = 1404,
  [SMALL_STATE(111)] = 1414,
  [SMALL_STATE(112)] = 1422,
  [SMALL_STATE(113)] = 1432,
  [SMALL_STATE(114)] = 1440,
  [SMALL_STATE(115)] = 1448,
  [SMALL_STATE(116)] = 1455,
  [SMALL_STATE(117)] = 1462,
  [SMALL_STATE(118)] = 1469,
  [SMALL_STATE(119)] = 1476,
  [SMALL_STATE(120)] = 1483,
  [SMALL_STATE(121)] = 1490,
  [SMALL_STATE(122)] = 1497,
  [SMALL_STATE(123)] = 1504,
  [SMALL_STATE(124)] = 1511,
  [SMALL_STATE(125)] = 1518,
  [SMALL_STATE(126)] = 1525,
  [SMALL_STATE(127)] = 1532,
  [SMALL_STATE(128)] = 1539,
  [SMALL_STATE(129)] = 1546,
  [SMALL_STATE(130)] = 1553,
  [SMALL_STATE(131)] = 1560,
  [SMALL_STATE(132)] = 1567,
  [SMALL_STATE(133)] = 1574,
  [SMALL_STATE(134)] = 1581,
  [SMALL_STATE(135)] = 1588,
  [SMALL_STATE(136)] = 1595,
  [SMALL_STATE(137)] = 1602,
  [SMALL_STATE(138)] = 1609,
  [SMALL_STATE(139)] = 1616,
  [SMALL_STATE(140)] = 1623,
  [SMALL_STATE(141)] = 1630,
};

static const TSParseActionEntry ts_parse_actions[] = {
  [0] = {.entry = {.count = 0, .reusable = false}},
  [1] = {.entry = {.count = 1, .reusable = false}}, RECOVER(),
  [3] = {.entry = {.count = 1, .reusable = true}}, SHIFT_EXTRA(),
  [5] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_source_file, 0, 0, 0),
  [7] = {.entry = {.count = 1, .reusable = true}}, SHIFT(133),
  [9] = {.entry = {.count = 1, .reusable = true}}, SHIFT(33),
  [11] = {.entry = {.count = 1, .reusable = true}}, SHIFT(7),
  [13] = {.entry = {.count = 1, .reusable = true}}, SHIFT(110),
  [15] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 3, 0, 0),
  [17] = {.entry = {.count = 1, .reusable = true}}, SHIFT(42),
  [19] = {.entry = {.count = 1, .reusable = false}}, SHIFT(7),
  [21] = {.entry = {.count = 1, .reusable = true}}, SHIFT(11),
  [23] = {.entry = {.count = 1, .reusable = true}}, SHIFT(116),
  [25] = {.entry = {.count = 1, .reusable = true}}, SHIFT(9),
  [27] = {.entry = {.count = 1, .reusable = true}}, SHIFT(88),
  [29] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 4, 0, 0),
  [31] = {.entry = {.count = 1, .reusable = false}}, SHIFT(9),
  [33] = {.entry = {.count = 1, .reusable = false}}, SHIFT(102),
  [35] = {.entry = {.count = 1, .reusable = true}}, SHIFT(103),
  [37] = {.entry = {.count = 1, .reusable = true}}, SHIFT(81),
  [39] = {.entry = {.count = 1, .reusable = false}}, SHIFT(103),
  [41] = {.entry = {.count = 1, .reusable = false}}, SHIFT(11),
  [43] = {.entry = {.count = 1, .reusable = false}}, SHIFT(116),
  [45] = {.entry = {.count = 1, .reusable = true}}, SHIFT(23),
  [47] = {.entry = {.count = 1, .reusable = false}}, SHIFT(23),
  [49] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_op_name, 1, 0, 0),
  [51] = {.entry = {.count = 1, .reusable = false}}, REDUCE(sym_op_name, 1, 0, 0),
  [53] = {.entry = {.count = 1, .reusable = true}}, SHIFT(5),
  [55] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 5, 0, 0),
  [57] = {.entry = {.count = 1, .reusable = true}}, SHIFT(96),
  [59] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 6, 0, 0),
  [61] = {.entry = {.count = 1, .reusable = true}}, SHIFT(107),
  [63] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_boolean, 1, 0, 0),
  [65] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_instruction_repeat2, 2, 0, 0), SHIFT_REPEAT(5),
  [68] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_instruction_repeat2, 2, 0, 0),
  [70] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_complex, 6, 0, 0),
  [72] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 4, 0, 1),
  [74] = {.entry = {.count = 1, .reusable = true}}, SHIFT(77),
  [76] = {.entry = {.count = 1, .reusable = true}}, SHIFT(97),
  [78] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 5, 0, 1),
  [80] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 5, 0, 2),
  [82] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 6, 0, 2),
  [84] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_operand_list, 2, 0, 0),
  [86] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_operand_list, 3, 0, 0),
  [88] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_operand_list, 4, 0, 0),
  [90] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_source_file_repeat1, 2, 0, 0),
  [92] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_source_file_repeat1, 2, 0, 0), SHIFT_REPEAT(133),
  [95] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_function_repeat2, 2, 0, 0), SHIFT_REPEAT(77),
  [98] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_function_repeat2, 2, 0, 0),
  [100] = {.entry = {.count = 1, .reusable = false}}, SHIFT(92),
  [102] = {.entry = {.count = 1, .reusable = true}}, SHIFT(92),
  [104] = {.entry = {.count = 1, .reusable = false}}, SHIFT(129),
  [106] = {.entry = {.count = 1, .reusable = true}}, SHIFT(57),
  [108] = {.entry = {.count = 1, .reusable = true}}, SHIFT(138),
  [110] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_instruction_repeat1, 2, 0, 0), SHIFT_REPEAT(117),
  [113] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_instruction_repeat1, 2, 0, 0),
  [115] = {.entry = {.count = 1, .reusable = true}}, SHIFT(140),
  [117] = {.entry = {.count = 1, .reusable = true}}, SHIFT(47),
  [119] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_source_file, 1, 0, 0),
  [121] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attributes, 4, 0, 0),
  [123] = {.entry = {.count = 1, .reusable = true}}, SHIFT(117),
  [125] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_return, 3, 0, 0),
  [127] = {.entry = {.count = 1, .reusable = true}}, SHIFT(87),
  [129] = {.entry = {.count = 1, .reusable = true}}, SHIFT(124),
  [131] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_result_types_repeat1, 2, 0, 0), SHIFT_REPEAT(91),
  [134] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_result_types_repeat1, 2, 0, 0),
  [136] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_function_repeat1, 2, 0, 0), SHIFT_REPEAT(87),
  [139] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_function_repeat1, 2, 0, 0),
  [141] = {.entry = {.count = 1, .reusable = true}}, SHIFT(49),
  [143] = {.entry = {.count = 1, .reusable = true}}, SHIFT(24),
  [145] = {.entry = {.count = 1, .reusable = true}}, SHIFT(91),
  [147] = {.entry = {.count = 1, .reusable = true}}, SHIFT(115),
  [149] = {.entry = {.count = 1, .reusable = true}}, SHIFT(30),
  [151] = {.entry = {.count = 1, .reusable = true}}, SHIFT(19),
  [153] = {.entry = {.count = 1, .reusable = true}}, SHIFT(20),
  [155] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attributes, 2, 0, 0),
  [157] = {.entry = {.count = 1, .reusable = true}}, SHIFT(78),
  [159] = {.entry = {.count = 1, .reusable = true}}, SHIFT(58),
  [161] = {.entry = {.count = 1, .reusable = true}}, SHIFT(94),
  [163] = {.entry = {.count = 1, .reusable = true}}, SHIFT(25),
  [165] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat1, 2, 0, 0),
  [167] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat1, 2, 0, 0), SHIFT_REPEAT(50),
  [170] = {.entry = {.count = 1, .reusable = true}}, SHIFT(98),
  [172] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_return, 2, 0, 0),
  [174] = {.entry = {.count = 1, .reusable = true}}, SHIFT(66),
  [176] = {.entry = {.count = 1, .reusable = true}}, SHIFT(72),
  [178] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_list, 2, 0, 0),
  [180] = {.entry = {.count = 1, .reusable = true}}, SHIFT(119),
  [182] = {.entry = {.count = 1, .reusable = true}}, SHIFT(67),
  [184] = {.entry = {.count = 1, .reusable = true}}, SHIFT(132),
  [186] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attributes, 3, 0, 0),
  [188] = {.entry = {.count = 1, .reusable = true}}, SHIFT(37),
  [190] = {.entry = {.count = 1, .reusable = true}}, SHIFT(134),
  [192] = {.entry = {.count = 1, .reusable = true}}, SHIFT(131),
  [194] = {.entry = {.count = 1, .reusable = true}}, SHIFT(125),
  [196] = {.entry = {.count = 1, .reusable = true}}, SHIFT(27),
  [198] = {.entry = {.count = 1, .reusable = true}}, SHIFT(135),
  [200] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat2, 2, 0, 0), SHIFT_REPEAT(30),
  [203] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat2, 2, 0, 0),
  [205] = {.entry = {.count = 1, .reusable = true}}, SHIFT(14),
  [207] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_list, 3, 0, 0),
  [209] = {.entry = {.count = 1, .reusable = true}}, SHIFT(75),
  [211] = {.entry = {.count = 1, .reusable = true}}, SHIFT(22),
  [213] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_attributes_repeat1, 2, 0, 0), SHIFT_REPEAT(78),
  [216] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_attributes_repeat1, 2, 0, 0),
  [218] = {.entry = {.count = 1, .reusable = true}}, SHIFT(46),
  [220] = {.entry = {.count = 1, .reusable = true}}, SHIFT(50),
  [222] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_operand_list_repeat1, 2, 0, 0), SHIFT_REPEAT(94),
  [225] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_operand_list_repeat1, 2, 0, 0),
  [227] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 7, 0, 0),
  [229] = {.entry = {.count = 1, .reusable = true}}, SHIFT(112),
  [231] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_list, 4, 0, 0),
  [233] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_list_repeat1, 2, 0, 0), SHIFT_REPEAT(119),
  [236] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_list_repeat1, 2, 0, 0),
  [238] = {.entry = {.count = 1, .reusable = true}}, SHIFT(84),
  [240] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 11, 0, 0),
  [242] = {.entry = {.count = 1, .reusable = true}}, SHIFT(55),
  [244] = {.entry = {.count = 1, .reusable = true}}, SHIFT(56),
  [246] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_type_attribute, 3, 0, 0),
  [248] = {.entry = {.count = 1, .reusable = true}}, SHIFT(6),
  [250] = {.entry = {.count = 1, .reusable = false}}, SHIFT(136),
  [252] = {.entry = {.count = 1, .reusable = true}}, SHIFT(136),
  [254] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 9, 0, 0),
  [256] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 12, 0, 0),
  [258] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_type_attribute, 1, 0, 0),
  [260] = {.entry = {.count = 1, .reusable = true}}, SHIFT(79),
  [262] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 9, 0, 0),
  [264] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_return, 1, 0, 0),
  [266] = {.entry = {.count = 1, .reusable = true}}, SHIFT(53),
  [268] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_parameter, 3, 0, 0),
  [270] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 10, 0, 0),
  [272] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_constant, 1, 0, 0),
  [274] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attribute, 3, 0, 0),
  [276] = {.entry = {.count = 1, .reusable = false}}, SHIFT(137),
  [278] = {.entry = {.count = 1, .reusable = true}}, SHIFT(137),
  [280] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 8, 0, 0),
  [282] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 3, 0, 0),
  [284] = {.entry = {.count = 1, .reusable = true}}, SHIFT(86),
  [286] = {.entry = {.count = 1, .reusable = true}}, SHIFT(71),
  [288] = {.entry = {.count = 1, .reusable = true}}, SHIFT(89),
  [290] = {.entry = {.count = 1, .reusable = true}}, SHIFT(109),
  [292] = {.entry = {.count = 1, .reusable = true}}, SHIFT(101),
  [294] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 1, 0, 0),
  [296] = {.entry = {.count = 1, .reusable = true}}, SHIFT(15),
  [298] = {.entry = {.count = 1, .reusable = true}}, SHIFT(4),
  [300] = {.entry = {.count = 1, .reusable = true}}, SHIFT(35),
  [302] = {.entry = {.count = 1, .reusable = true}}, SHIFT(36),
  [304] = {.entry = {.count = 1, .reusable = true}}, SHIFT(90),
  [306] = {.entry = {.count = 1, .reusable = true}}, SHIFT(80),
  [308] = {.entry = {.count = 1, .reusable = true}}, SHIFT(16),
  [310] = {.entry = {.count = 1, .reusable = true}}, SHIFT(104),
  [312] = {.entry = {.count = 1, .reusable = true}}, SHIFT(60),
  [314] = {.entry = {.count = 1, .reusable = true}}, SHIFT(85),
  [316] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 2, 0, 0),
  [318] = {.entry = {.count = 1, .reusable = true}}, SHIFT(130),
  [320] = {.entry = {.count = 1, .reusable = true}}, SHIFT(31),
  [322] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 4, 0, 0),
  [324] = {.entry = {.count = 1, .reusable = true}}, SHIFT(105),
  [326] = {.entry = {.count = 1, .reusable = true}}, SHIFT(13),
  [328] = {.entry = {.count = 1, .reusable = true}}, SHIFT(54),
  [330] = {.entry = {.count = 1, .reusable = true}},  ACCEPT_INPUT(),
  [332] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attribute_name, 1, 0, 0),
  [334] = {.entry = {.count = 1, .reusable = true}}, SHIFT(26),
};

#ifdef __cplusplus
extern "C" {
#endif
#ifdef TREE_SITTER_HIDE_SYMBOLS
#define TS_PUBLIC
#elif defined(_WIN32)
#define TS_PUBLIC __declspec(dllexport)
#else
#define TS_PUBLIC __attribute__((visibility("default")))
#endif

TS_PUBLIC const TSLanguage *tree_sitter_kir(void) {
  static const TSLanguage language = {
    .version = LANGUAGE_VERSION,
    .symbol_count = SYMBOL_COUNT,
    .alias_count = ALIAS_COUNT,
    .token_count = TOKEN_COUNT,
    .external_token_count = EXTERNAL_TOKEN_COUNT,
    .state_count = STATE_COUNT,
    .large_state_count = LARGE_STATE_COUNT,
    .production_id_count = PRODUCTION_ID_COUNT,
    .field_count = FIELD_COUNT,
    .max_alias_sequence_length = MAX_ALIAS_SEQUENCE_LENGTH,
    .parse_table = &ts_parse_table[0][0],
    .small_parse_table = ts_small_parse_table,
    .small_parse_table_map = ts_small_parse_table_map,
    .parse_actions = ts_parse_actions,
    .symbol_names = ts_symbol_names,
    .symbol_metadata = ts_symbol_metadata,
    .public_symbol_map = ts_symbol_map,
    .alias_map = ts_non_terminal_alias_map,
    .alias_sequences = &ts_alias_sequences[0][0],
    .lex_modes = ts_lex_modes,
    .lex_fn = ts_lex,
    .keyword_lex_fn = ts_lex_keywords,
    .keyword_capture_token = sym_identifier,
    .primary_state_ids = ts_primary_state_ids,
  };
  return &language;
}
#ifdef __cplusplus
}
#endif
