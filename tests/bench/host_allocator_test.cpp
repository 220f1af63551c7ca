// bench/host_allocator: the mode names, what a test process runs under, and the environment that starts a child
// under each mode (the user's own LD_PRELOAD and GLIBC_TUNABLES entries kept, only the allocators' moved).
#include "bench/host_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

namespace stepwise::bench {
namespace {

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::map<std::string, std::optional<std::string>> as_map(const EnvironmentChanges& changes) {
  return {changes.begin(), changes.end()};
}

TEST(HostAllocatorMode, NamesRoundTripAndABadOneListsTheValidOnes) {
  for (const auto& name : host_allocator_mode_names())
    EXPECT_EQ(to_string(host_allocator_mode_from_string(name)), name);
  try {
    host_allocator_mode_from_string("mimalloc");
    FAIL() << "accepted an unknown mode";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown host allocator mode 'mimalloc' (valid: glibc-tunables, jemalloc, tcmalloc)");
  }
}

TEST(HostAllocator, ThisTestRunsUnderTheCLibrarysMallocUnlessTheTunablesSayOtherwise) {
  ScopedEnv tunables("GLIBC_TUNABLES", nullptr);
  const auto here = current_host_allocator();
  if (here.mode && *here.mode != HostAllocatorMode::GlibcTunables)
    GTEST_SKIP() << "this test process was started under " << here.name();
  EXPECT_FALSE(here.mode);
  EXPECT_EQ(here.to_json()["mode"], "off");
  ScopedEnv policy("GLIBC_TUNABLES", ("glibc.malloc.check=0:" + malloc_policy_tunables()).c_str());
  EXPECT_EQ(current_host_allocator().mode, HostAllocatorMode::GlibcTunables);
}

TEST(HostAllocatorEnvironment, TheTunablesModeAddsThePolicyAndKeepsTheUsersOwnTunables) {
  ScopedEnv tunables("GLIBC_TUNABLES", "glibc.malloc.check=0:glibc.malloc.mmap_max=7");
  ScopedEnv preload("LD_PRELOAD", "/opt/libprofiler.so");
  const auto env = as_map(host_allocator_environment(HostAllocatorMode::GlibcTunables));
  EXPECT_EQ(env.at("GLIBC_TUNABLES"), "glibc.malloc.check=0:" + malloc_policy_tunables());
  EXPECT_EQ(env.at("LD_PRELOAD"), "/opt/libprofiler.so");
}

TEST(HostAllocatorEnvironment, OffRemovesThePolicyAndAnyPreloadedAllocatorOnly) {
  ScopedEnv tunables("GLIBC_TUNABLES", malloc_policy_tunables().c_str());
  ScopedEnv preload("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2:/opt/libprofiler.so");
  const auto env = as_map(host_allocator_environment(std::nullopt));
  EXPECT_EQ(env.at("GLIBC_TUNABLES"), std::nullopt);
  EXPECT_EQ(env.at("LD_PRELOAD"), "/opt/libprofiler.so");
}

TEST(HostAllocatorEnvironment, APreloadedModeNamesItsLibraryFirstOrSaysWhatToInstall) {
  for (const auto mode : {HostAllocatorMode::Jemalloc, HostAllocatorMode::Tcmalloc}) {
    ScopedEnv preload("LD_PRELOAD", "/opt/libprofiler.so");
    if (const auto missing = missing_host_allocator(mode)) {
      EXPECT_NE(missing->find("scripts/setup.sh installs it"), std::string::npos) << *missing;
      EXPECT_THROW(host_allocator_environment(mode), std::runtime_error);
      continue;
    }
    const auto preloaded = *as_map(host_allocator_environment(mode)).at("LD_PRELOAD");
    const std::string library = mode == HostAllocatorMode::Jemalloc ? "libjemalloc.so.2" : "libtcmalloc_minimal.so.4";
    EXPECT_NE(preloaded.find(library + ":/opt/libprofiler.so"), std::string::npos) << preloaded;
  }
  EXPECT_FALSE(missing_host_allocator(HostAllocatorMode::GlibcTunables));
}

}  // namespace
}  // namespace stepwise::bench
