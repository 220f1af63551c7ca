// Token streams: reading nanoGPT's and llm.c's files with every bad case named, and the seeded synthetic source
// whose structure makes the loss fall within a few steps.
#include "bench/tokens.h"

#include <array>
#include <fstream>
#include <random>
#include <stdexcept>

namespace stepwise::bench {

namespace {

// The synthetic chain uses this many distinct token ids, each followed by one of kSuccessors others.
constexpr size_t kActiveTokens = 512;
constexpr size_t kSuccessors = 4;
// Successor probabilities: skewed so the bigram entropy (~1.1 nats) is far below the unigram one (~6.2).
constexpr std::array<double, kSuccessors> kSuccessorWeights{0.6, 0.2, 0.15, 0.05};

std::runtime_error file_error(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error("token file " + path.string() + ": " + what);
}

}  // namespace

std::string to_string(TokenFileFormat f) { return kTokenFileFormatNames.to_string(f); }

TokenFileFormat token_file_format_from_string(const std::string& s) { return kTokenFileFormatNames.from_string(s); }

TokenFile read_token_file(const std::filesystem::path& path, TokenFileFormat format, int64_t vocab_size) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw file_error(path, "does not exist");
  if (!std::filesystem::is_regular_file(path, ec)) throw file_error(path, "is not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw file_error(path, "cannot read its size: " + ec.message());
  if (size == 0) throw file_error(path, "is empty");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, "cannot be opened");

  std::array<int32_t, kLlmcHeaderInts> header{};
  const size_t header_bytes = sizeof(header);
  bool has_magic = false;
  if (size >= sizeof(int32_t)) {
    int32_t magic = 0;
    in.read(reinterpret_cast<char*>(&magic), sizeof(magic));
    has_magic = magic == kLlmcMagic;
    in.seekg(0);
  }
  if (format == TokenFileFormat::Auto) format = has_magic ? TokenFileFormat::LlmC : TokenFileFormat::NanoGPT;

  TokenFile out{{}, format};
  size_t count = 0;
  if (format == TokenFileFormat::LlmC) {
    if (size < header_bytes)
      throw file_error(path, "truncated: " + std::to_string(size) + " bytes, shorter than llm.c's 1024-byte header");
    in.read(reinterpret_cast<char*>(header.data()), header_bytes);
    if (header[0] != kLlmcMagic)
      throw file_error(path, "wrong magic " + std::to_string(header[0]) + " (llm.c files start with " +
                                 std::to_string(kLlmcMagic) + ")");
    if (header[1] != kLlmcVersion)
      throw file_error(path, "unsupported llm.c version " + std::to_string(header[1]) + " (supported: 1, uint16)");
    if (header[2] < 0) throw file_error(path, "negative token count in header");
    count = static_cast<size_t>(header[2]);
    const size_t available = (size - header_bytes) / sizeof(uint16_t);
    if (available < count)
      throw file_error(
          path, "truncated: header says " + std::to_string(count) + " tokens, file holds " + std::to_string(available));
  } else {
    if (size % sizeof(uint16_t) != 0)
      throw file_error(path, "truncated: " + std::to_string(size) + " bytes is not a whole number of uint16 tokens");
    count = size / sizeof(uint16_t);
  }
  if (count == 0) throw file_error(path, "holds no tokens");
  out.tokens.resize(count);
  in.read(reinterpret_cast<char*>(out.tokens.data()), static_cast<std::streamsize>(count * sizeof(uint16_t)));
  if (!in) throw file_error(path, "read failed");
  for (size_t i = 0; i < count; ++i)
    if (out.tokens[i] >= vocab_size)
      throw file_error(path, "token " + std::to_string(out.tokens[i]) + " at position " + std::to_string(i) +
                                 " is outside the vocabulary (" + std::to_string(vocab_size) + ")");
  return out;
}

Tokens synthetic_tokens(size_t count, int64_t vocab_size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t active = std::min<size_t>(kActiveTokens, static_cast<size_t>(vocab_size));
  // Spread the active ids over the whole vocabulary so every row of the embedding can be touched.
  std::uniform_int_distribution<int64_t> any_token(0, vocab_size - 1);
  std::vector<uint16_t> ids(active);
  for (auto& id : ids) id = static_cast<uint16_t>(any_token(rng));
  std::uniform_int_distribution<size_t> any_state(0, active - 1);
  std::vector<std::array<size_t, kSuccessors>> next(active);
  for (auto& successors : next)
    for (auto& s : successors) s = any_state(rng);

  std::discrete_distribution<size_t> pick(kSuccessorWeights.begin(), kSuccessorWeights.end());
  Tokens tokens(count);
  size_t state = any_state(rng);
  for (auto& t : tokens) {
    t = ids[state];
    state = next[state][pick(rng)];
  }
  return tokens;
}

}  // namespace stepwise::bench
