#include "platform/sandbox/format.h"

#include <sstream>

#include "base/shell_quote.h"

namespace codexd::sandbox {
namespace {

void append_list(std::ostringstream& out, std::string_view title,
                 const std::vector<std::string>& items) {
  out << title << ":";
  if (items.empty()) out << " (none)";
  out << "\n";
  for (const std::string& item : items) out << "  " << item << "\n";
}

}  // namespace

std::string format_sandbox_spec(const SandboxSpec& spec) {
  std::ostringstream out;
  out << "mode: " << to_string(spec.mode) << "\n";
  out << "network: " << to_string(spec.network)
      << (spec.network == NetworkMode::kHost ? " (DANGEROUS: the host's network namespace)" : "") << "\n";
  out << "writable roots:";
  if (spec.writable_roots.empty()) out << " (none)";
  out << "\n";
  for (const WritableRoot& root : spec.writable_roots) {
    out << "  " << root.root << "\n";
    for (const std::string& sub : root.read_only_subpaths) out << "    read-only: " << sub << "\n";
  }
  append_list(out, "denied read", spec.denied_read);
  append_list(out, "masked", spec.masked_paths);
  if (!spec.notes.empty()) append_list(out, "notes", spec.notes);
  return out.str();
}

std::string format_launch_plan(const LaunchPlan& plan) {
  std::ostringstream out;
  out << "backend: " << to_string(plan.backend) << "\n";
  out << "cwd: " << plan.cwd << "\n";
  out << "argv:\n";
  // One flag per line with its operands keeps long bwrap invocations readable.
  std::string line;
  for (const std::string& word : plan.argv) {
    bool starts_option = word.size() > 2 && word[0] == '-' && word[1] == '-';
    if ((starts_option || word == "--") && !line.empty()) {
      out << "  " << line << " \\\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  if (!line.empty()) out << "  " << line << "\n";
  out << "env:\n";
  for (const std::string& entry : plan.env) {
    size_t eq = entry.find('=');
    std::string name = entry.substr(0, eq);
    // Only the sandbox markers are shown with values; other values may be private.
    bool marker = name == "CODEXD_SANDBOX" || name == "CODEX_SANDBOX_NETWORK_DISABLED";
    out << "  " << (marker ? entry : name + "=...") << "\n";
  }
  append_list(out, "rules", plan.rules);
  return out.str();
}

std::string format_capability_report(const CapabilityReport& report) {
  std::ostringstream out;
  out << "chosen backend: " << to_string(report.chosen) << "\n";
  for (const CapabilityFact& fact : report.facts) out << fact.name << ": " << fact.value << "\n";
  if (!report.helper_path.empty()) {
    out << "helper: " << report.helper_path << (report.helper_usable ? "" : " (not usable)") << "\n";
  }
  out << "probe time: " << report.probe_millis << " ms\n";
  append_list(out, "warnings", report.warnings);
  return out.str();
}

}  // namespace codexd::sandbox
