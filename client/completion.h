// `codexctl completion bash|zsh|fish`: a completion script made from codexctl's own command
// tree (CLI11), so that it knows every subcommand and option the binary has, nested ones too,
// and cannot drift from it. The Debian package installs the three scripts.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace codexd::client {

// One command of the tree: its path ("" for codexctl itself, "daemon restart"), what may
// follow it, and which of its options take a value (their value completes as a file name).
struct CompletionNode {
  std::string path;
  std::string description;
  std::vector<std::string> subcommands;
  std::vector<std::string> options;        // every spelling: --json, -C, --workdir
  std::vector<std::string> value_options;  // those that take a value
  std::vector<std::string> arguments;      // fixed choices for its argument (completion's shells)
};

// The tree under `app`, depth first, plus `policy check` (which parses its own flags).
std::vector<CompletionNode> completion_tree(const CLI::App& app);

// The script for `shell` ("bash", "zsh" or "fish").
std::string completion_script(const std::vector<CompletionNode>& tree, const std::string& shell);

}  // namespace codexd::client
