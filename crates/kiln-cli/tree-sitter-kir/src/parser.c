#include "tree_sitter/parser.h"

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif

#define LANGUAGE_VERSION 14
#define STATE_COUNT 133
#define LARGE_STATE_COUNT 2
#define SYMBOL_COUNT 58
#define ALIAS_COUNT 1
#define TOKEN_COUNT 29
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
  sym_integer = 15,
  sym_float = 16,
  anon_sym_true = 17,
  anon_sym_false = 18,
  anon_sym_complex = 19,
  sym_string = 20,
  sym_device = 21,
  anon_sym_LBRACK = 22,
  anon_sym_RBRACK = 23,
  anon_sym_tensor = 24,
  anon_sym_LT = 25,
  anon_sym_GT = 26,
  sym_dim = 27,
  anon_sym_strides = 28,
  sym_source_file = 29,
  sym_function = 30,
  sym_parameter = 31,
  sym_result_types = 32,
  sym_instruction = 33,
  sym_op_name = 34,
  sym_return = 35,
  sym__operand = 36,
  sym__literal = 37,
  sym_boolean = 38,
  sym_complex = 39,
  sym_attributes = 40,
  sym_attribute = 41,
  sym_attribute_name = 42,
  sym__attribute_value = 43,
  sym_constant = 44,
  sym_list = 45,
  sym_tensor_type = 46,
  sym_type_attribute = 47,
  aux_sym_source_file_repeat1 = 48,
  aux_sym_function_repeat1 = 49,
  aux_sym_function_repeat2 = 50,
  aux_sym_result_types_repeat1 = 51,
  aux_sym_instruction_repeat1 = 52,
  aux_sym_instruction_repeat2 = 53,
  aux_sym_attributes_repeat1 = 54,
  aux_sym_list_repeat1 = 55,
  aux_sym_tensor_type_repeat1 = 56,
  aux_sym_tensor_type_repeat2 = 57,
  alias_sym_dtype = 58,
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
  [sym_integer] = "integer",
  [sym_float] = "float",
  [anon_sym_true] = "true",
  [anon_sym_false] = "false",
  [anon_sym_complex] = "complex",
  [sym_string] = "string",
  [sym_device] = "device",
  [anon_sym_LBRACK] = "[",
  [anon_sym_RBRACK] = "]",
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
  [sym_integer] = sym_integer,
  [sym_float] = sym_float,
  [anon_sym_true] = anon_sym_true,
  [anon_sym_false] = anon_sym_false,
  [anon_sym_complex] = anon_sym_complex,
  [sym_string] = sym_string,
  [sym_device] = sym_device,
  [anon_sym_LBRACK] = anon_sym_LBRACK,
  [anon_sym_RBRACK] = anon_sym_RBRACK,
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
  [anon_sym_LBRACK] = {
    .visible = true,
    .named = false,
  },
  [anon_sym_RBRACK] = {
    .visible = true,
    .named = false,
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
};

static bool ts_lex(TSLexer *lexer, TSStateId state) {
  START_LEXER();
  eof = lexer->eof(lexer);
  switch (state) {
    case 0:
      if (eof) ADVANCE(37);
      ADVANCE_MAP(
        '"', 2,
        '%', 34,
        '(', 39,
        ')', 41,
        ',', 40,
        '-', 6,
        '/', 5,
        ':', 71,
        '<', 90,
        '=', 72,
        '>', 91,
        '@', 35,
        '[', 88,
        ']', 89,
        'c', 60,
        'f', 47,
        'i', 58,
        'n', 48,
        'r', 49,
        't', 62,
        '{', 43,
        '}', 44,
      );
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(0);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(75);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 1:
      ADVANCE_MAP(
        '"', 2,
        '%', 34,
        '-', 14,
        '/', 5,
        '[', 88,
        ']', 89,
        'c', 60,
        'f', 47,
        'i', 58,
        'n', 48,
        't', 62,
      );
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(1);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(76);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 2:
      if (lookahead == '"') ADVANCE(86);
      if (lookahead != 0 &&
          lookahead != '\n') ADVANCE(2);
      END_STATE();
    case 3:
      ADVANCE_MAP(
        '%', 34,
        ')', 41,
        ',', 40,
        '-', 14,
        '/', 5,
        ':', 71,
        'c', 21,
        'f', 7,
        'i', 18,
        'n', 8,
        'r', 9,
        't', 23,
        '{', 43,
        '}', 44,
      );
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(3);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(76);
      END_STATE();
    case 4:
      if (lookahead == '/') ADVANCE(5);
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(4);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 5:
      if (lookahead == '/') ADVANCE(38);
      END_STATE();
    case 6:
      if (lookahead == '>') ADVANCE(42);
      if (lookahead == 'i') ADVANCE(18);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(76);
      END_STATE();
    case 7:
      if (lookahead == 'a') ADVANCE(15);
      END_STATE();
    case 8:
      if (lookahead == 'a') ADVANCE(19);
      END_STATE();
    case 9:
      if (lookahead == 'e') ADVANCE(26);
      END_STATE();
    case 10:
      if (lookahead == 'e') ADVANCE(80);
      END_STATE();
    case 11:
      if (lookahead == 'e') ADVANCE(82);
      END_STATE();
    case 12:
      if (lookahead == 'e') ADVANCE(30);
      END_STATE();
    case 13:
      if (lookahead == 'f') ADVANCE(77);
      END_STATE();
    case 14:
      if (lookahead == 'i') ADVANCE(18);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(76);
      END_STATE();
    case 15:
      if (lookahead == 'l') ADVANCE(25);
      END_STATE();
    case 16:
      if (lookahead == 'l') ADVANCE(12);
      END_STATE();
    case 17:
      if (lookahead == 'm') ADVANCE(22);
      END_STATE();
    case 18:
      if (lookahead == 'n') ADVANCE(13);
      END_STATE();
    case 19:
      if (lookahead == 'n') ADVANCE(77);
      END_STATE();
    case 20:
      if (lookahead == 'n') ADVANCE(73);
      END_STATE();
    case 21:
      if (lookahead == 'o') ADVANCE(17);
      END_STATE();
    case 22:
      if (lookahead == 'p') ADVANCE(16);
      END_STATE();
    case 23:
      if (lookahead == 'r') ADVANCE(27);
      END_STATE();
    case 24:
      if (lookahead == 'r') ADVANCE(20);
      END_STATE();
    case 25:
      if (lookahead == 's') ADVANCE(11);
      END_STATE();
    case 26:
      if (lookahead == 't') ADVANCE(28);
      END_STATE();
    case 27:
      if (lookahead == 'u') ADVANCE(10);
      END_STATE();
    case 28:
      if (lookahead == 'u') ADVANCE(24);
      END_STATE();
    case 29:
      if (lookahead == 'x') ADVANCE(92);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(29);
      END_STATE();
    case 30:
      if (lookahead == 'x') ADVANCE(84);
      END_STATE();
    case 31:
      if (lookahead == '+' ||
          lookahead == '-') ADVANCE(33);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(79);
      END_STATE();
    case 32:
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(87);
      END_STATE();
    case 33:
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(79);
      END_STATE();
    case 34:
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(46);
      END_STATE();
    case 35:
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(45);
      END_STATE();
    case 36:
      if (eof) ADVANCE(37);
      if (lookahead == '(') ADVANCE(39);
      if (lookahead == ')') ADVANCE(41);
      if (lookahead == '/') ADVANCE(5);
      if (lookahead == '}') ADVANCE(44);
      if (('\t' <= lookahead && lookahead <= '\r') ||
          lookahead == ' ') SKIP(36);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(29);
      if (('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(70);
      END_STATE();
    case 37:
      ACCEPT_TOKEN(ts_builtin_sym_end);
      END_STATE();
    case 38:
      ACCEPT_TOKEN(sym_comment);
      if (lookahead != 0 &&
          lookahead != '\n') ADVANCE(38);
      END_STATE();
    case 39:
      ACCEPT_TOKEN(anon_sym_LPAREN);
      END_STATE();
    case 40:
      ACCEPT_TOKEN(anon_sym_COMMA);
      END_STATE();
    case 41:
      ACCEPT_TOKEN(anon_sym_RPAREN);
      END_STATE();
    case 42:
      ACCEPT_TOKEN(anon_sym_DASH_GT);
      END_STATE();
    case 43:
      ACCEPT_TOKEN(anon_sym_LBRACE);
      END_STATE();
    case 44:
      ACCEPT_TOKEN(anon_sym_RBRACE);
      END_STATE();
    case 45:
      ACCEPT_TOKEN(sym_function_name);
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(45);
      END_STATE();
    case 46:
      ACCEPT_TOKEN(sym_value);
      if (lookahead == '.' ||
          ('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(46);
      END_STATE();
    case 47:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'a') ADVANCE(54);
      if (('b' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 48:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'a') ADVANCE(57);
      if (('b' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 49:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'e') ADVANCE(65);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 50:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'e') ADVANCE(81);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 51:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'e') ADVANCE(83);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 52:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'e') ADVANCE(68);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 53:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'f') ADVANCE(69);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 54:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'l') ADVANCE(64);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 55:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'l') ADVANCE(52);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 56:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'm') ADVANCE(61);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 57:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'n') ADVANCE(69);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 58:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'n') ADVANCE(53);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 59:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'n') ADVANCE(74);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 60:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'o') ADVANCE(56);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 61:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'p') ADVANCE(55);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 62:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'r') ADVANCE(66);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 63:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'r') ADVANCE(59);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 64:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 's') ADVANCE(51);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 65:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 't') ADVANCE(67);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 66:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'u') ADVANCE(50);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 67:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'u') ADVANCE(63);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 68:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (lookahead == 'x') ADVANCE(85);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 69:
      ACCEPT_TOKEN(sym_identifier);
      if (lookahead == ':') ADVANCE(32);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 70:
      ACCEPT_TOKEN(sym_identifier);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_' ||
          ('a' <= lookahead && lookahead <= 'z')) ADVANCE(70);
      END_STATE();
    case 71:
      ACCEPT_TOKEN(anon_sym_COLON);
      END_STATE();
    case 72:
      ACCEPT_TOKEN(anon_sym_EQ);
      END_STATE();
    case 73:
      ACCEPT_TOKEN(anon_sym_return);
      END_STATE();
    case 74:
      ACCEPT_TOKEN(anon_sym_return);
      if (lookahead == ':') ADVANCE(32);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 75:
      ACCEPT_TOKEN(sym_integer);
      if (lookahead == '.') ADVANCE(78);
      if (lookahead == 'x') ADVANCE(92);
      if (lookahead == 'E' ||
          lookahead == 'e') ADVANCE(31);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(75);
      END_STATE();
    case 76:
      ACCEPT_TOKEN(sym_integer);
      if (lookahead == '.') ADVANCE(78);
      if (lookahead == 'E' ||
          lookahead == 'e') ADVANCE(31);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(76);
      END_STATE();
    case 77:
      ACCEPT_TOKEN(sym_float);
      END_STATE();
    case 78:
      ACCEPT_TOKEN(sym_float);
      if (lookahead == 'E' ||
          lookahead == 'e') ADVANCE(31);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(78);
      END_STATE();
    case 79:
      ACCEPT_TOKEN(sym_float);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(79);
      END_STATE();
    case 80:
      ACCEPT_TOKEN(anon_sym_true);
      END_STATE();
    case 81:
      ACCEPT_TOKEN(anon_sym_true);
      if (lookahead == ':') ADVANCE(32);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 82:
      ACCEPT_TOKEN(anon_sym_false);
      END_STATE();
    case 83:
      ACCEPT_TOKEN(anon_sym_false);
      if (lookahead == ':') ADVANCE(32);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 84:
      ACCEPT_TOKEN(anon_sym_complex);
      END_STATE();
    case 85:
      ACCEPT_TOKEN(anon_sym_complex);
      if (lookahead == ':') ADVANCE(32);
      if (('a' <= lookahead && lookahead <= 'z')) ADVANCE(69);
      if (('0' <= lookahead && lookahead <= '9') ||
          ('A' <= lookahead && lookahead <= 'Z') ||
          lookahead == '_') ADVANCE(70);
      END_STATE();
    case 86:
      ACCEPT_TOKEN(sym_string);
      END_STATE();
    case 87:
      ACCEPT_TOKEN(sym_device);
      if (('0' <= lookahead && lookahead <= '9')) ADVANCE(87);
      END_STATE();
    case 88:
      ACCEPT_TOKEN(anon_sym_LBRACK);
      END_STATE();
    case 89:
      ACCEPT_TOKEN(anon_sym_RBRACK);
      END_STATE();
    case 90:
      ACCEPT_TOKEN(anon_sym_LT);
      END_STATE();
    case 91:
      ACCEPT_TOKEN(anon_sym_GT);
      END_STATE();
    case 92:
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
  [1] = {.lex_state = 36},
  [2] = {.lex_state = 1},
  [3] = {.lex_state = 3},
  [4] = {.lex_state = 3},
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
  [26] = {.lex_state = 36},
  [27] = {.lex_state = 36},
  [28] = {.lex_state = 4},
  [29] = {.lex_state = 36},
  [30] = {.lex_state = 0},
  [31] = {.lex_state = 36},
  [32] = {.lex_state = 36},
  [33] = {.lex_state = 36},
  [34] = {.lex_state = 0},
  [35] = {.lex_state = 36},
  [36] = {.lex_state = 0},
  [37] = {.lex_state = 36},
  [38] = {.lex_state = 0},
  [39] = {.lex_state = 0},
  [40] = {.lex_state = 0},
  [41] = {.lex_state = 0},
  [42] = {.lex_state = 0},
  [43] = {.lex_state = 0},
  [44] = {.lex_state = 0},
  [45] = {.lex_state = 3},
  [46] = {.lex_state = 36},
  [47] = {.lex_state = 3},
  [48] = {.lex_state = 0},
  [49] = {.lex_state = 0},
  [50] = {.lex_state = 0},
  [51] = {.lex_state = 0},
  [52] = {.lex_state = 36},
  [53] = {.lex_state = 0},
  [54] = {.lex_state = 0},
  [55] = {.lex_state = 36},
  [56] = {.lex_state = 3},
  [57] = {.lex_state = 0},
  [58] = {.lex_state = 0},
  [59] = {.lex_state = 0},
  [60] = {.lex_state = 3},
  [61] = {.lex_state = 0},
  [62] = {.lex_state = 0},
  [63] = {.lex_state = 0},
  [64] = {.lex_state = 0},
  [65] = {.lex_state = 3},
  [66] = {.lex_state = 0},
  [67] = {.lex_state = 3},
  [68] = {.lex_state = 0},
  [69] = {.lex_state = 0},
  [70] = {.lex_state = 0},
  [71] = {.lex_state = 3},
  [72] = {.lex_state = 36},
  [73] = {.lex_state = 0},
  [74] = {.lex_state = 0},
  [75] = {.lex_state = 0},
  [76] = {.lex_state = 36},
  [77] = {.lex_state = 1},
  [78] = {.lex_state = 0},
  [79] = {.lex_state = 3},
  [80] = {.lex_state = 3},
  [81] = {.lex_state = 36},
  [82] = {.lex_state = 36},
  [83] = {.lex_state = 36},
  [84] = {.lex_state = 0},
  [85] = {.lex_state = 36},
  [86] = {.lex_state = 36},
  [87] = {.lex_state = 36},
  [88] = {.lex_state = 3},
  [89] = {.lex_state = 0},
  [90] = {.lex_state = 3},
  [91] = {.lex_state = 36},
  [92] = {.lex_state = 0},
  [93] = {.lex_state = 0},
  [94] = {.lex_state = 0},
  [95] = {.lex_state = 0},
  [96] = {.lex_state = 3},
  [97] = {.lex_state = 3},
  [98] = {.lex_state = 36},
  [99] = {.lex_state = 36},
  [100] = {.lex_state = 0},
  [101] = {.lex_state = 0},
  [102] = {.lex_state = 3},
  [103] = {.lex_state = 36},
  [104] = {.lex_state = 36},
  [105] = {.lex_state = 0},
  [106] = {.lex_state = 0},
  [107] = {.lex_state = 0},
  [108] = {.lex_state = 0},
  [109] = {.lex_state = 0},
  [110] = {.lex_state = 0},
  [111] = {.lex_state = 0},
  [112] = {.lex_state = 0},
  [113] = {.lex_state = 1},
  [114] = {.lex_state = 0},
  [115] = {.lex_state = 0},
  [116] = {.lex_state = 0},
  [117] = {.lex_state = 0},
  [118] = {.lex_state = 0},
  [119] = {.lex_state = 0},
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
    [sym_integer] = ACTIONS(1),
    [sym_float] = ACTIONS(1),
    [anon_sym_true] = ACTIONS(1),
    [anon_sym_false] = ACTIONS(1),
    [anon_sym_complex] = ACTIONS(1),
    [sym_string] = ACTIONS(1),
    [sym_device] = ACTIONS(1),
    [anon_sym_LBRACK] = ACTIONS(1),
    [anon_sym_RBRACK] = ACTIONS(1),
    [anon_sym_tensor] = ACTIONS(1),
    [anon_sym_LT] = ACTIONS(1),
    [anon_sym_GT] = ACTIONS(1),
    [sym_dim] = ACTIONS(1),
    [anon_sym_strides] = ACTIONS(1),
  },
  [1] = {
    [sym_source_file] = STATE(122),
    [sym_function] = STATE(29),
    [aux_sym_source_file_repeat1] = STATE(29),
    [ts_builtin_sym_end] = ACTIONS(5),
    [sym_comment] = ACTIONS(3),
    [anon_sym_func] = ACTIONS(7),
  },
};

static const uint16_t ts_small_parse_table[] = {
  [0] = 8,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(9), 1,
      sym_identifier,
    ACTIONS(17), 1,
      anon_sym_complex,
    ACTIONS(19), 1,
      anon_sym_LBRACK,
    ACTIONS(13), 2,
      sym_integer,
      sym_float,
    ACTIONS(15), 2,
      anon_sym_true,
      anon_sym_false,
    ACTIONS(11), 3,
      sym_value,
      sym_string,
      sym_device,
    STATE(95), 6,
      sym__literal,
      sym_boolean,
      sym_complex,
      sym__attribute_value,
      sym_constant,
      sym_list,
  [34] = 10,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(21), 1,
      anon_sym_LBRACE,
    ACTIONS(25), 1,
      anon_sym_COLON,
    ACTIONS(27), 1,
      anon_sym_return,
    ACTIONS(29), 1,
      sym_integer,
    ACTIONS(33), 1,
      anon_sym_complex,
    STATE(45), 1,
      sym_attributes,
    ACTIONS(23), 2,
      sym_value,
      sym_float,
    ACTIONS(31), 2,
      anon_sym_true,
      anon_sym_false,
    STATE(8), 4,
      sym__operand,
      sym__literal,
      sym_boolean,
      sym_complex,
  [70] = 10,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(21), 1,
      anon_sym_LBRACE,
    ACTIONS(33), 1,
      anon_sym_complex,
    ACTIONS(37), 1,
      anon_sym_COLON,
    ACTIONS(39), 1,
      anon_sym_return,
    ACTIONS(41), 1,
      sym_integer,
    STATE(71), 1,
      sym_attributes,
    ACTIONS(31), 2,
      anon_sym_true,
      anon_sym_false,
    ACTIONS(35), 2,
      sym_value,
      sym_float,
    STATE(10), 4,
      sym__operand,
      sym__literal,
      sym_boolean,
      sym_complex,
  [106] = 6,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(33), 1,
      anon_sym_complex,
    ACTIONS(45), 1,
      sym_integer,
    ACTIONS(31), 2,
      anon_sym_true,
      anon_sym_false,
    ACTIONS(43), 2,
      sym_value,
      sym_float,
    STATE(22), 4,
      sym__operand,
      sym__literal,
      sym_boolean,
      sym_complex,
  [130] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(49), 1,
      sym_integer,
    ACTIONS(47), 8,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
      sym_float,
      anon_sym_true,
      anon_sym_false,
      anon_sym_complex,
  [147] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(21), 1,
      anon_sym_LBRACE,
    ACTIONS(51), 1,
      anon_sym_COMMA,
    ACTIONS(55), 1,
      anon_sym_COLON,
    STATE(12), 1,
      aux_sym_instruction_repeat2,
    STATE(60), 1,
      sym_attributes,
    ACTIONS(53), 2,
      sym_value,
      anon_sym_return,
  [170] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(21), 1,
      anon_sym_LBRACE,
    ACTIONS(37), 1,
      anon_sym_COLON,
    ACTIONS(51), 1,
      anon_sym_COMMA,
    STATE(7), 1,
      aux_sym_instruction_repeat2,
    STATE(71), 1,
      sym_attributes,
    ACTIONS(39), 2,
      sym_value,
      anon_sym_return,
  [193] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(21), 1,
      anon_sym_LBRACE,
    ACTIONS(51), 1,
      anon_sym_COMMA,
    ACTIONS(59), 1,
      anon_sym_COLON,
    STATE(12), 1,
      aux_sym_instruction_repeat2,
    STATE(67), 1,
      sym_attributes,
    ACTIONS(57), 2,
      sym_value,
      anon_sym_return,
  [216] = 7,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(21), 1,
      anon_sym_LBRACE,
    ACTIONS(51), 1,
      anon_sym_COMMA,
    ACTIONS(55), 1,
      anon_sym_COLON,
    STATE(9), 1,
      aux_sym_instruction_repeat2,
    STATE(60), 1,
      sym_attributes,
    ACTIONS(53), 2,
      sym_value,
      anon_sym_return,
  [239] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(61), 6,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      anon_sym_RBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [251] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(63), 1,
      anon_sym_COMMA,
    STATE(12), 1,
      aux_sym_instruction_repeat2,
    ACTIONS(66), 4,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [267] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(68), 6,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      anon_sym_RBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [279] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(70), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [290] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(72), 1,
      sym_value,
    ACTIONS(74), 1,
      anon_sym_return,
    STATE(123), 1,
      sym_return,
    STATE(25), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [307] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(72), 1,
      sym_value,
    ACTIONS(74), 1,
      anon_sym_return,
    STATE(123), 1,
      sym_return,
    STATE(20), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [324] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(72), 1,
      sym_value,
    ACTIONS(74), 1,
      anon_sym_return,
    STATE(124), 1,
      sym_return,
    STATE(21), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [341] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(76), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [352] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(78), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [363] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(72), 1,
      sym_value,
    ACTIONS(74), 1,
      anon_sym_return,
    STATE(124), 1,
      sym_return,
    STATE(25), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [380] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(72), 1,
      sym_value,
    ACTIONS(74), 1,
      anon_sym_return,
    STATE(119), 1,
      sym_return,
    STATE(25), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [397] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(66), 5,
      anon_sym_COMMA,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [408] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(80), 5,
      anon_sym_COMMA,
      anon_sym_RPAREN,
      anon_sym_LBRACE,
      sym_value,
      anon_sym_return,
  [419] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(72), 1,
      sym_value,
    ACTIONS(74), 1,
      anon_sym_return,
    STATE(118), 1,
      sym_return,
    STATE(15), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [436] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(82), 1,
      sym_value,
    ACTIONS(85), 1,
      anon_sym_return,
    STATE(25), 2,
      sym_instruction,
      aux_sym_function_repeat2,
  [450] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(87), 1,
      ts_builtin_sym_end,
    ACTIONS(89), 1,
      anon_sym_func,
    STATE(26), 2,
      sym_function,
      aux_sym_source_file_repeat1,
  [464] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(92), 1,
      anon_sym_LPAREN,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(107), 1,
      sym_result_types,
    STATE(126), 1,
      sym_tensor_type,
  [480] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(96), 1,
      sym_identifier,
    ACTIONS(98), 1,
      sym_device,
    ACTIONS(100), 1,
      anon_sym_strides,
    STATE(89), 1,
      sym_type_attribute,
  [496] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(7), 1,
      anon_sym_func,
    ACTIONS(102), 1,
      ts_builtin_sym_end,
    STATE(26), 2,
      sym_function,
      aux_sym_source_file_repeat1,
  [510] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(104), 1,
      anon_sym_COMMA,
    STATE(30), 1,
      aux_sym_instruction_repeat1,
    ACTIONS(107), 2,
      anon_sym_RBRACE,
      anon_sym_EQ,
  [524] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(92), 1,
      anon_sym_LPAREN,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(106), 1,
      sym_result_types,
    STATE(126), 1,
      sym_tensor_type,
  [540] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(92), 1,
      anon_sym_LPAREN,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(115), 1,
      sym_result_types,
    STATE(126), 1,
      sym_tensor_type,
  [556] = 5,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(109), 1,
      sym_identifier,
    ACTIONS(111), 1,
      anon_sym_RBRACE,
    STATE(48), 1,
      sym_attribute,
    STATE(132), 1,
      sym_attribute_name,
  [572] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(113), 1,
      anon_sym_COMMA,
    ACTIONS(116), 1,
      anon_sym_RBRACK,
    STATE(34), 1,
      aux_sym_list_repeat1,
  [585] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(118), 1,
      sym_identifier,
    ACTIONS(120), 1,
      sym_dim,
    STATE(46), 1,
      aux_sym_tensor_type_repeat1,
  [598] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(122), 1,
      anon_sym_COMMA,
    ACTIONS(124), 1,
      anon_sym_EQ,
    STATE(49), 1,
      aux_sym_instruction_repeat1,
  [611] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    ACTIONS(126), 1,
      anon_sym_RPAREN,
    STATE(42), 1,
      sym_tensor_type,
  [624] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(122), 1,
      anon_sym_COMMA,
    ACTIONS(128), 1,
      anon_sym_RBRACE,
    STATE(30), 1,
      aux_sym_instruction_repeat1,
  [637] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(130), 1,
      anon_sym_COMMA,
    ACTIONS(132), 1,
      anon_sym_RPAREN,
    STATE(59), 1,
      aux_sym_function_repeat1,
  [650] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(134), 1,
      anon_sym_COMMA,
    ACTIONS(137), 1,
      anon_sym_RPAREN,
    STATE(40), 1,
      aux_sym_result_types_repeat1,
  [663] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(139), 1,
      anon_sym_COMMA,
    ACTIONS(142), 1,
      anon_sym_RPAREN,
    STATE(41), 1,
      aux_sym_function_repeat1,
  [676] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(144), 1,
      anon_sym_COMMA,
    ACTIONS(146), 1,
      anon_sym_RPAREN,
    STATE(61), 1,
      aux_sym_result_types_repeat1,
  [689] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(148), 1,
      anon_sym_COMMA,
    ACTIONS(150), 1,
      anon_sym_GT,
    STATE(62), 1,
      aux_sym_tensor_type_repeat2,
  [702] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(148), 1,
      anon_sym_COMMA,
    ACTIONS(152), 1,
      anon_sym_GT,
    STATE(70), 1,
      aux_sym_tensor_type_repeat2,
  [715] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(37), 1,
      anon_sym_COLON,
    ACTIONS(39), 2,
      sym_value,
      anon_sym_return,
  [726] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(154), 1,
      sym_identifier,
    ACTIONS(156), 1,
      sym_dim,
    STATE(46), 1,
      aux_sym_tensor_type_repeat1,
  [739] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(159), 3,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [748] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(161), 1,
      anon_sym_COMMA,
    ACTIONS(163), 1,
      anon_sym_RBRACE,
    STATE(57), 1,
      aux_sym_attributes_repeat1,
  [761] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(122), 1,
      anon_sym_COMMA,
    ACTIONS(165), 1,
      anon_sym_EQ,
    STATE(30), 1,
      aux_sym_instruction_repeat1,
  [774] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(107), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_EQ,
  [783] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(122), 1,
      anon_sym_COMMA,
    ACTIONS(167), 1,
      anon_sym_RBRACE,
    STATE(38), 1,
      aux_sym_instruction_repeat1,
  [796] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(169), 1,
      sym_identifier,
    ACTIONS(171), 1,
      sym_dim,
    STATE(35), 1,
      aux_sym_tensor_type_repeat1,
  [809] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(173), 1,
      anon_sym_COMMA,
    ACTIONS(175), 1,
      anon_sym_RBRACK,
    STATE(64), 1,
      aux_sym_list_repeat1,
  [822] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(177), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_GT,
  [831] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(109), 1,
      sym_identifier,
    STATE(92), 1,
      sym_attribute,
    STATE(132), 1,
      sym_attribute_name,
  [844] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(179), 3,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [853] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(161), 1,
      anon_sym_COMMA,
    ACTIONS(181), 1,
      anon_sym_RBRACE,
    STATE(66), 1,
      aux_sym_attributes_repeat1,
  [866] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(183), 1,
      anon_sym_RPAREN,
    ACTIONS(185), 1,
      sym_value,
    STATE(39), 1,
      sym_parameter,
  [879] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(130), 1,
      anon_sym_COMMA,
    ACTIONS(187), 1,
      anon_sym_RPAREN,
    STATE(41), 1,
      aux_sym_function_repeat1,
  [892] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(59), 1,
      anon_sym_COLON,
    ACTIONS(57), 2,
      sym_value,
      anon_sym_return,
  [903] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(144), 1,
      anon_sym_COMMA,
    ACTIONS(189), 1,
      anon_sym_RPAREN,
    STATE(40), 1,
      aux_sym_result_types_repeat1,
  [916] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(191), 1,
      anon_sym_COMMA,
    ACTIONS(194), 1,
      anon_sym_GT,
    STATE(62), 1,
      aux_sym_tensor_type_repeat2,
  [929] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(196), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_GT,
  [938] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(173), 1,
      anon_sym_COMMA,
    ACTIONS(198), 1,
      anon_sym_RBRACK,
    STATE(34), 1,
      aux_sym_list_repeat1,
  [951] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(200), 3,
      sym_value,
      anon_sym_COLON,
      anon_sym_return,
  [960] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(202), 1,
      anon_sym_COMMA,
    ACTIONS(205), 1,
      anon_sym_RBRACE,
    STATE(66), 1,
      aux_sym_attributes_repeat1,
  [973] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(209), 1,
      anon_sym_COLON,
    ACTIONS(207), 2,
      sym_value,
      anon_sym_return,
  [984] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(211), 3,
      anon_sym_COMMA,
      anon_sym_RBRACE,
      anon_sym_GT,
  [993] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(148), 1,
      anon_sym_COMMA,
    ACTIONS(213), 1,
      anon_sym_GT,
    STATE(43), 1,
      aux_sym_tensor_type_repeat2,
  [1006] = 4,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(148), 1,
      anon_sym_COMMA,
    ACTIONS(215), 1,
      anon_sym_GT,
    STATE(62), 1,
      aux_sym_tensor_type_repeat2,
  [1019] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(55), 1,
      anon_sym_COLON,
    ACTIONS(53), 2,
      sym_value,
      anon_sym_return,
  [1030] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(79), 1,
      sym_tensor_type,
  [1040] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(19), 1,
      anon_sym_LBRACK,
    STATE(78), 1,
      sym_list,
  [1050] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(137), 2,
      anon_sym_COMMA,
      anon_sym_RPAREN,
  [1058] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(142), 2,
      anon_sym_COMMA,
      anon_sym_RPAREN,
  [1066] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(217), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1074] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(219), 1,
      sym_integer,
    ACTIONS(221), 1,
      anon_sym_RBRACK,
  [1084] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(223), 2,
      anon_sym_COMMA,
      anon_sym_GT,
  [1092] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(53), 2,
      sym_value,
      anon_sym_return,
  [1100] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(225), 1,
      sym_integer,
    ACTIONS(227), 1,
      sym_float,
  [1110] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(229), 1,
      sym_identifier,
    STATE(3), 1,
      sym_op_name,
  [1120] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(90), 1,
      sym_tensor_type,
  [1130] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(101), 1,
      sym_tensor_type,
  [1140] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(185), 1,
      sym_value,
    STATE(75), 1,
      sym_parameter,
  [1150] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(231), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1158] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(233), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1166] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(74), 1,
      sym_tensor_type,
  [1176] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(235), 2,
      sym_value,
      anon_sym_return,
  [1184] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(194), 2,
      anon_sym_COMMA,
      anon_sym_GT,
  [1192] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(57), 2,
      sym_value,
      anon_sym_return,
  [1200] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(97), 1,
      sym_tensor_type,
  [1210] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(205), 2,
      anon_sym_COMMA,
      anon_sym_RBRACE,
  [1218] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(237), 1,
      anon_sym_RBRACE,
    ACTIONS(239), 1,
      sym_value,
  [1228] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(241), 2,
      anon_sym_COMMA,
      anon_sym_RBRACE,
  [1236] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(243), 2,
      anon_sym_COMMA,
      anon_sym_RBRACE,
  [1244] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(245), 1,
      sym_integer,
    ACTIONS(247), 1,
      sym_float,
  [1254] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(207), 2,
      sym_value,
      anon_sym_return,
  [1262] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(102), 1,
      sym_tensor_type,
  [1272] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(229), 1,
      sym_identifier,
    STATE(4), 1,
      sym_op_name,
  [1282] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(116), 2,
      anon_sym_COMMA,
      anon_sym_RBRACK,
  [1290] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(249), 2,
      anon_sym_COMMA,
      anon_sym_RPAREN,
  [1298] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(251), 2,
      sym_value,
      anon_sym_return,
  [1306] = 3,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(94), 1,
      anon_sym_tensor,
    STATE(88), 1,
      sym_tensor_type,
  [1316] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(253), 2,
      ts_builtin_sym_end,
      anon_sym_func,
  [1324] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(255), 2,
      anon_sym_COMMA,
      anon_sym_GT,
  [1332] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(257), 1,
      anon_sym_LBRACE,
  [1339] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(259), 1,
      anon_sym_LBRACE,
  [1346] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(261), 1,
      anon_sym_DASH_GT,
  [1353] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(263), 1,
      anon_sym_LPAREN,
  [1360] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(265), 1,
      anon_sym_LBRACE,
  [1367] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(267), 1,
      sym_function_name,
  [1374] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(269), 1,
      anon_sym_DASH_GT,
  [1381] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(271), 1,
      sym_integer,
  [1388] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(273), 1,
      anon_sym_LT,
  [1395] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(275), 1,
      anon_sym_LBRACE,
  [1402] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(277), 1,
      anon_sym_LBRACE,
  [1409] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(279), 1,
      anon_sym_LBRACE,
  [1416] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(281), 1,
      anon_sym_RBRACE,
  [1423] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(283), 1,
      anon_sym_RBRACE,
  [1430] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(285), 1,
      anon_sym_COLON,
  [1437] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(287), 1,
      anon_sym_LPAREN,
  [1444] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(289), 1,
      ts_builtin_sym_end,
  [1451] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(291), 1,
      anon_sym_RBRACE,
  [1458] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(293), 1,
      anon_sym_RBRACE,
  [1465] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(295), 1,
      anon_sym_DASH_GT,
  [1472] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(297), 1,
      anon_sym_LBRACE,
  [1479] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(299), 1,
      anon_sym_EQ,
  [1486] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(301), 1,
      anon_sym_RPAREN,
  [1493] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(303), 1,
      sym_value,
  [1500] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(305), 1,
      anon_sym_EQ,
  [1507] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(307), 1,
      anon_sym_COMMA,
  [1514] = 2,
    ACTIONS(3), 1,
      sym_comment,
    ACTIONS(309), 1,
      anon_sym_EQ,
};

static const uint32_t ts_small_parse_table_map[] = {
  [SMALL_STATE(2)] = 0,
  [SMALL_STATE(3)] = 34,
  [SMALL_STATE(4)] = 70,
  [SMALL_STATE(5)] = 106,
  [SMALL_STATE(6)] = 130,
  [SMALL_STATE(7)] = 147,
  [SMALL_STATE(8)] = 170,
  [SMALL_STATE(9)] = 193,
  [SMALL_STATE(10)] = 216,
  [SMALL_STATE(11)] = 239,
  [SMALL_STATE(12)] = 251,
  [SMALL_STATE(13)] = 267,
  [SMALL_STATE(14)] = 279,
  [SMALL_STATE(15)] = 290,
  [SMALL_STATE(16)] = 307,
  [SMALL_STATE(17)] = 324,
  [SMALL_STATE(18)] = 341,
  [SMALL_STATE(19)] = 352,
  [SMALL_STATE(20)] = 363,
  [SMALL_STATE(21)] = 380,
  [SMALL_STATE(22)] = 397,
  [SMALL_STATE(23)] = 408,
  [SMALL_STATE(24)] = 419,
  [SMALL_STATE(25)] = 436,
  [SMALL_STATE(26)] = 450,
  [SMALL_STATE(27)] = 464,
  [SMALL_STATE(28)] = 480,
  [SMALL_STATE(29)] = 496,
  [SMALL_STATE(30)] = 510,
  [SMALL_STATE(31)] = 524,
  [SMALL_STATE(32)] = 540,
  [SMALL_STATE(33)] = 556,
  [SMALL_STATE(34)] = 572,
  [SMALL_STATE(35)] = 585,
  [SMALL_STATE(36)] = 598,
  [SMALL_STATE(37)] = 611,
  [SMALL_STATE(38)] = 624,
  [SMALL_STATE(39)] = 637,
  [SMALL_STATE(40)] = 650,
  [SMALL_STATE(41)] = 663,
  [SMALL_STATE(42)] = 676,
  [SMALL_STATE(43)] = 689,
  [SMALL_STATE(44)] = 702,
  [SMALL_STATE(45)] = 715,
  [SMALL_STATE(46)] = 726,
  [SMALL_STATE(47)] = 739,
  [SMALL_STATE(48)] = 748,
  [SMALL_STATE(49)] = 761,
  [SMALL_STATE(50)] = 774,
  [SMALL_STATE(51)] = 783,
  [SMALL_STATE(52)] = 796,
  [SMALL_STATE(53)] = 809,
  [SMALL_STATE(54)] = 822,
  [SMALL_STATE(55)] = 831,
  [SMALL_STATE(56)] = 844,
  [SMALL_STATE(57)] = 853,
  [SMALL_STATE(58)] = 866,
  [SMALL_STATE(59)] = 879,
  [SMALL_STATE(60)] = 892,
  [SMALL_STATE(61)] = 903,
  [SMALL_STATE(62)] = 916,
  [SMALL_STATE(63)] = 929,
  [SMALL_STATE(64)] = 938,
  [SMALL_STATE(65)] = 951,
  [SMALL_STATE(66)] = 960,
  [SMALL_STATE(67)] = 973,
  [SMALL_STATE(68)] = 984,
  [SMALL_STATE(69)] = 993,
  [SMALL_STATE(70)] = 1006,
  [SMALL_STATE(71)] = 1019,
  [SMALL_STATE(72)] = 1030,
  [SMALL_STATE(73)] = 1040,
  [SMALL_STATE(74)] = 1050,
  [SMALL_STATE(75)] = 1058,
  [SMALL_STATE(76)] = 1066,
  [SMALL_STATE(77)] = 1074,
  [SMALL_STATE(78)] = 1084,
  [SMALL_STATE(79)] = 1092,
  [SMALL_STATE(80)] = 1100,
  [SMALL_STATE(81)] = 1110,
  [SMALL_STATE(82)] = 1120,
  [SMALL_STATE(83)] = 1130,
  [SMALL_STATE(84)] = 1140,
  [SMALL_STATE(85)] = 1150,
  [SMALL_STATE(86)] = 1158,
  [SMALL_STATE(87)] = 1166,
  [SMALL_STATE(88)] = 1176,
  [SMALL_STATE(89)] = 1184,
  [SMALL_STATE(90)] = 1192,
  [SMALL_STATE(91)] = 1200,
  [SMALL_STATE(92)] = 1210,
  [SMALL_STATE(93)] = 1218,
  [SMALL_STATE(94)] = 1228,
  [SMALL_STATE(95)] = 1236,
  [SMALL_STATE(96)] = 1244,
  [SMALL_STATE(97)] = 1254,
  [SMALL_STATE(98)] = 1262,
  [SMALL_STATE(99)] = 1272,
  [SMALL_STATE(100)] = 1282,
  [SMALL_STATE(101)] = 1290,
  [SMALL_STATE(102)] = 1298,
  [SMALL_STATE(103)] = 1306,
  [SMALL_STATE(104)] = 1316,
  [SMALL_STATE(105)] = 1324,
  [SMALL_STATE(106)] = 1332,
  [SMALL_STATE(107)] = 1339,
  [SMALL_STATE(108)] = 1346,
  [SMALL_STATE(109)] = 1353,
  [SMALL_STATE(110)] = 1360,
  [SMALL_STATE(111)] = 1367,
  [SMALL_STATE(112)] = 1374,
  [SMALL_STATE(113)] = 1381,
  [SMALL_STATE(114)] = 1388,
  [SMALL_STATE(115)] = 1395,
  [SMALL_STATE(116)] = 1402,
  [SMALL_STATE(117)] = 1409,
  [SMALL_STATE(118)] = 1416,
  [SMALL_STATE(119)] = 1423,
  [SMALL_STATE(120)] = 1430,
  [SMALL_STATE(121)] = 1437,
  [SMALL_STATE(122)] = 1444,
  [SMALL_STATE(123)] = 1451,
  [SMALL_STATE(124)] = 1458,
  [SMALL_STATE(125)] = 1465,
  [SMALL_STATE(126)] = 1472,
  [SMALL_STATE(127)] = 1479,
  [SMALL_STATE(128)] = 1486,
  [SMALL_STATE(129)] = 1493,
  [SMALL_STATE(130)] = 1500,
  [SMALL_STATE(131)] = 1507,
  [SMALL_STATE(132)] = 1514,
};

static const TSParseActionEntry ts_parse_actions[] = {
  [0] = {.entry = {.count = 0, .reusable = false}},
  [1] = {.entry = {.count = 1, .reusable = false}}, RECOVER(),
  [3] = {.entry = {.count = 1, .reusable = true}}, SHIFT_EXTRA(),
  [5] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_source_file, 0, 0, 0),
  [7] = {.entry = {.count = 1, .reusable = true}}, SHIFT(111),
  [9] = {.entry = {.count = 1, .reusable = false}}, SHIFT(94),
  [11] = {.entry = {.count = 1, .reusable = true}}, SHIFT(95),
  [13] = {.entry = {.count = 1, .reusable = false}}, SHIFT(95),
  [15] = {.entry = {.count = 1, .reusable = false}}, SHIFT(11),
  [17] = {.entry = {.count = 1, .reusable = false}}, SHIFT(121),
  [19] = {.entry = {.count = 1, .reusable = true}}, SHIFT(77),
  [21] = {.entry = {.count = 1, .reusable = true}}, SHIFT(33),
  [23] = {.entry = {.count = 1, .reusable = true}}, SHIFT(8),
  [25] = {.entry = {.count = 1, .reusable = true}}, SHIFT(72),
  [27] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 3, 0, 0),
  [29] = {.entry = {.count = 1, .reusable = false}}, SHIFT(8),
  [31] = {.entry = {.count = 1, .reusable = true}}, SHIFT(11),
  [33] = {.entry = {.count = 1, .reusable = true}}, SHIFT(121),
  [35] = {.entry = {.count = 1, .reusable = true}}, SHIFT(10),
  [37] = {.entry = {.count = 1, .reusable = true}}, SHIFT(82),
  [39] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 4, 0, 0),
  [41] = {.entry = {.count = 1, .reusable = false}}, SHIFT(10),
  [43] = {.entry = {.count = 1, .reusable = true}}, SHIFT(22),
  [45] = {.entry = {.count = 1, .reusable = false}}, SHIFT(22),
  [47] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_op_name, 1, 0, 0),
  [49] = {.entry = {.count = 1, .reusable = false}}, REDUCE(sym_op_name, 1, 0, 0),
  [51] = {.entry = {.count = 1, .reusable = true}}, SHIFT(5),
  [53] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 5, 0, 0),
  [55] = {.entry = {.count = 1, .reusable = true}}, SHIFT(91),
  [57] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 6, 0, 0),
  [59] = {.entry = {.count = 1, .reusable = true}}, SHIFT(98),
  [61] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_boolean, 1, 0, 0),
  [63] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_instruction_repeat2, 2, 0, 0), SHIFT_REPEAT(5),
  [66] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_instruction_repeat2, 2, 0, 0),
  [68] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_complex, 6, 0, 0),
  [70] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 5, 0, 2),
  [72] = {.entry = {.count = 1, .reusable = true}}, SHIFT(36),
  [74] = {.entry = {.count = 1, .reusable = true}}, SHIFT(93),
  [76] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 4, 0, 1),
  [78] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 5, 0, 1),
  [80] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_tensor_type, 6, 0, 2),
  [82] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_function_repeat2, 2, 0, 0), SHIFT_REPEAT(36),
  [85] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_function_repeat2, 2, 0, 0),
  [87] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_source_file_repeat1, 2, 0, 0),
  [89] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_source_file_repeat1, 2, 0, 0), SHIFT_REPEAT(111),
  [92] = {.entry = {.count = 1, .reusable = true}}, SHIFT(37),
  [94] = {.entry = {.count = 1, .reusable = true}}, SHIFT(114),
  [96] = {.entry = {.count = 1, .reusable = false}}, SHIFT(105),
  [98] = {.entry = {.count = 1, .reusable = true}}, SHIFT(105),
  [100] = {.entry = {.count = 1, .reusable = false}}, SHIFT(130),
  [102] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_source_file, 1, 0, 0),
  [104] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_instruction_repeat1, 2, 0, 0), SHIFT_REPEAT(129),
  [107] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_instruction_repeat1, 2, 0, 0),
  [109] = {.entry = {.count = 1, .reusable = true}}, SHIFT(127),
  [111] = {.entry = {.count = 1, .reusable = true}}, SHIFT(47),
  [113] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_list_repeat1, 2, 0, 0), SHIFT_REPEAT(113),
  [116] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_list_repeat1, 2, 0, 0),
  [118] = {.entry = {.count = 1, .reusable = true}}, SHIFT(44),
  [120] = {.entry = {.count = 1, .reusable = true}}, SHIFT(46),
  [122] = {.entry = {.count = 1, .reusable = true}}, SHIFT(129),
  [124] = {.entry = {.count = 1, .reusable = true}}, SHIFT(81),
  [126] = {.entry = {.count = 1, .reusable = true}}, SHIFT(116),
  [128] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_return, 3, 0, 0),
  [130] = {.entry = {.count = 1, .reusable = true}}, SHIFT(84),
  [132] = {.entry = {.count = 1, .reusable = true}}, SHIFT(125),
  [134] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_result_types_repeat1, 2, 0, 0), SHIFT_REPEAT(87),
  [137] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_result_types_repeat1, 2, 0, 0),
  [139] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_function_repeat1, 2, 0, 0), SHIFT_REPEAT(84),
  [142] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_function_repeat1, 2, 0, 0),
  [144] = {.entry = {.count = 1, .reusable = true}}, SHIFT(87),
  [146] = {.entry = {.count = 1, .reusable = true}}, SHIFT(110),
  [148] = {.entry = {.count = 1, .reusable = true}}, SHIFT(28),
  [150] = {.entry = {.count = 1, .reusable = true}}, SHIFT(19),
  [152] = {.entry = {.count = 1, .reusable = true}}, SHIFT(14),
  [154] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat1, 2, 0, 0),
  [156] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat1, 2, 0, 0), SHIFT_REPEAT(46),
  [159] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attributes, 2, 0, 0),
  [161] = {.entry = {.count = 1, .reusable = true}}, SHIFT(55),
  [163] = {.entry = {.count = 1, .reusable = true}}, SHIFT(56),
  [165] = {.entry = {.count = 1, .reusable = true}}, SHIFT(99),
  [167] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_return, 2, 0, 0),
  [169] = {.entry = {.count = 1, .reusable = true}}, SHIFT(69),
  [171] = {.entry = {.count = 1, .reusable = true}}, SHIFT(35),
  [173] = {.entry = {.count = 1, .reusable = true}}, SHIFT(113),
  [175] = {.entry = {.count = 1, .reusable = true}}, SHIFT(63),
  [177] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_list, 2, 0, 0),
  [179] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attributes, 3, 0, 0),
  [181] = {.entry = {.count = 1, .reusable = true}}, SHIFT(65),
  [183] = {.entry = {.count = 1, .reusable = true}}, SHIFT(112),
  [185] = {.entry = {.count = 1, .reusable = true}}, SHIFT(120),
  [187] = {.entry = {.count = 1, .reusable = true}}, SHIFT(108),
  [189] = {.entry = {.count = 1, .reusable = true}}, SHIFT(117),
  [191] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat2, 2, 0, 0), SHIFT_REPEAT(28),
  [194] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_tensor_type_repeat2, 2, 0, 0),
  [196] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_list, 3, 0, 0),
  [198] = {.entry = {.count = 1, .reusable = true}}, SHIFT(68),
  [200] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attributes, 4, 0, 0),
  [202] = {.entry = {.count = 2, .reusable = true}}, REDUCE(aux_sym_attributes_repeat1, 2, 0, 0), SHIFT_REPEAT(55),
  [205] = {.entry = {.count = 1, .reusable = true}}, REDUCE(aux_sym_attributes_repeat1, 2, 0, 0),
  [207] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 7, 0, 0),
  [209] = {.entry = {.count = 1, .reusable = true}}, SHIFT(103),
  [211] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_list, 4, 0, 0),
  [213] = {.entry = {.count = 1, .reusable = true}}, SHIFT(18),
  [215] = {.entry = {.count = 1, .reusable = true}}, SHIFT(23),
  [217] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 11, 0, 0),
  [219] = {.entry = {.count = 1, .reusable = true}}, SHIFT(53),
  [221] = {.entry = {.count = 1, .reusable = true}}, SHIFT(54),
  [223] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_type_attribute, 3, 0, 0),
  [225] = {.entry = {.count = 1, .reusable = false}}, SHIFT(131),
  [227] = {.entry = {.count = 1, .reusable = true}}, SHIFT(131),
  [229] = {.entry = {.count = 1, .reusable = true}}, SHIFT(6),
  [231] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 9, 0, 0),
  [233] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 12, 0, 0),
  [235] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 9, 0, 0),
  [237] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_return, 1, 0, 0),
  [239] = {.entry = {.count = 1, .reusable = true}}, SHIFT(51),
  [241] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_constant, 1, 0, 0),
  [243] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attribute, 3, 0, 0),
  [245] = {.entry = {.count = 1, .reusable = false}}, SHIFT(128),
  [247] = {.entry = {.count = 1, .reusable = true}}, SHIFT(128),
  [249] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_parameter, 3, 0, 0),
  [251] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_instruction, 8, 0, 0),
  [253] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_function, 10, 0, 0),
  [255] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_type_attribute, 1, 0, 0),
  [257] = {.entry = {.count = 1, .reusable = true}}, SHIFT(16),
  [259] = {.entry = {.count = 1, .reusable = true}}, SHIFT(17),
  [261] = {.entry = {.count = 1, .reusable = true}}, SHIFT(27),
  [263] = {.entry = {.count = 1, .reusable = true}}, SHIFT(58),
  [265] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 3, 0, 0),
  [267] = {.entry = {.count = 1, .reusable = true}}, SHIFT(109),
  [269] = {.entry = {.count = 1, .reusable = true}}, SHIFT(32),
  [271] = {.entry = {.count = 1, .reusable = true}}, SHIFT(100),
  [273] = {.entry = {.count = 1, .reusable = true}}, SHIFT(52),
  [275] = {.entry = {.count = 1, .reusable = true}}, SHIFT(24),
  [277] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 2, 0, 0),
  [279] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 4, 0, 0),
  [281] = {.entry = {.count = 1, .reusable = true}}, SHIFT(85),
  [283] = {.entry = {.count = 1, .reusable = true}}, SHIFT(86),
  [285] = {.entry = {.count = 1, .reusable = true}}, SHIFT(83),
  [287] = {.entry = {.count = 1, .reusable = true}}, SHIFT(80),
  [289] = {.entry = {.count = 1, .reusable = true}},  ACCEPT_INPUT(),
  [291] = {.entry = {.count = 1, .reusable = true}}, SHIFT(104),
  [293] = {.entry = {.count = 1, .reusable = true}}, SHIFT(76),
  [295] = {.entry = {.count = 1, .reusable = true}}, SHIFT(31),
  [297] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_result_types, 1, 0, 0),
  [299] = {.entry = {.count = 1, .reusable = true}}, REDUCE(sym_attribute_name, 1, 0, 0),
  [301] = {.entry = {.count = 1, .reusable = true}}, SHIFT(13),
  [303] = {.entry = {.count = 1, .reusable = true}}, SHIFT(50),
  [305] = {.entry = {.count = 1, .reusable = true}}, SHIFT(73),
  [307] = {.entry = {.count = 1, .reusable = true}}, SHIFT(96),
  [309] = {.entry = {.count = 1, .reusable = true}}, SHIFT(2),
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
