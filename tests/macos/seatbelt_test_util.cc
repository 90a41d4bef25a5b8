#include "tests/macos/seatbelt_test_util.h"

#include <algorithm>
#include <set>

#include "tests/macos/sbpl_reader.h"

namespace codexd::sandbox::macos_backend::testing {

std::string dynamic_part(const std::string& policy_text) {
  std::string prefix = std::string(base_policy_sbpl()) + "\n";
  EXPECT_TRUE(policy_text.starts_with(prefix)) << "policy does not start with the base policy";
  if (!policy_text.starts_with(prefix)) return policy_text;
  return policy_text.substr(prefix.size());
}

void expect_well_formed(const SeatbeltPolicy& policy) {
  SbplReadResult read = read_sbpl(policy.text);
  ASSERT_EQ(read.error, "") << policy.text;
  ASSERT_FALSE(read.forms.empty());
  const SbplNode& version = read.forms.front();
  ASSERT_EQ(version.head(), "version");
  ASSERT_EQ(version.children.size(), 2u);
  EXPECT_TRUE(version.children[1].is_symbol("1"));
  for (size_t i = 1; i < read.forms.size(); ++i) {
    std::string head = read.forms[i].head();
    EXPECT_TRUE(head == "allow" || head == "deny") << "top-level form #" << i << " is (" << head << " ...)";
  }

  std::set<std::string> defined;
  for (const SeatbeltParam& param : policy.params) {
    EXPECT_TRUE(defined.insert(param.name).second) << "parameter defined twice: " << param.name;
    EXPECT_FALSE(param.value.empty()) << param.name;
  }
  std::vector<std::string> used = referenced_params(read.forms);
  std::set<std::string> used_set(used.begin(), used.end());
  EXPECT_EQ(used_set, defined) << "parameters referenced by the policy differ from those passed with -D";
}

}  // namespace codexd::sandbox::macos_backend::testing
