// Token streams: a seeded synthetic source with learnable structure, and nanoGPT / llm.c token files.
#pragma once

#include "model/enum_names.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace stepwise::bench {

// GPT-2 token ids fit in 16 bits; both file formats store them as uint16.
using Tokens = std::vector<uint16_t>;

enum class TokenFileFormat { Auto, NanoGPT, LlmC };
inline constexpr auto kTokenFileFormatNames = model::enum_names<TokenFileFormat>(
    "data format",
    {{TokenFileFormat::Auto, "auto"}, {TokenFileFormat::NanoGPT, "nanogpt"}, {TokenFileFormat::LlmC, "llmc"}});
std::string to_string(TokenFileFormat f);
// Throws std::invalid_argument naming the valid formats.
TokenFileFormat token_file_format_from_string(const std::string& s);

// llm.c's .bin header: 256 int32, [0] = magic, [1] = version, [2] = token count, then uint16 tokens.
constexpr int32_t kLlmcMagic = 20240520;
constexpr int32_t kLlmcVersion = 1;
constexpr size_t kLlmcHeaderInts = 256;

struct TokenFile {
  Tokens tokens;
  TokenFileFormat format;  // the one actually read (Auto resolved)
};

// Reads and validates a token file. Auto picks llm.c when the magic is present, else nanoGPT's raw uint16.
// Throws std::runtime_error naming the file and the problem: missing, empty, truncated, wrong magic or version,
// or a token id >= vocab_size.
TokenFile read_token_file(const std::filesystem::path& path, TokenFileFormat format, int64_t vocab_size);

// Deterministic tokens with structure a model can learn: a sparse first-order Markov chain over a subset of
// the vocabulary. Loss starts near ln(vocab) and falls within a few steps (unigram, then bigram structure).
Tokens synthetic_tokens(size_t count, int64_t vocab_size, uint64_t seed);

}  // namespace stepwise::bench
