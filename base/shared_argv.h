// One immutable command line, shared by everything that refers to it. A pending approval's
// command is in the plan's request, the policy's assessment (each segment, a heuristic match,
// the proposed amendment) and the reviewers' ticket: as plain vectors that was one copy each,
// a dozen megabytes for a 1 MB argv (issue 19 item 5). A SharedArgv is a pointer to one
// buffer: copying it copies the pointer, and nothing changes the words once it is made.
//
// It reads as a `const std::vector<std::string>&` (implicitly, or words()); it is made from a
// vector (implicitly, taking it) and compares by the words. shares() tells whether two are the
// same buffer, which is how the tests hold the sharing in place.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace codexd {

class SharedArgv {
 public:
  using Words = std::vector<std::string>;
  using value_type = std::string;
  using const_iterator = Words::const_iterator;
  using iterator = const_iterator;

  SharedArgv() = default;
  SharedArgv(Words words) : words_(std::make_shared<const Words>(std::move(words))) {}  // NOLINT: implicit on purpose
  SharedArgv(std::initializer_list<std::string> words) : SharedArgv(Words(words)) {}

  const Words& words() const { return words_ ? *words_ : empty_words(); }
  operator const Words&() const { return words(); }  // NOLINT: implicit on purpose

  const_iterator begin() const { return words().begin(); }
  const_iterator end() const { return words().end(); }
  size_t size() const { return words().size(); }
  bool empty() const { return words().empty(); }
  const std::string& operator[](size_t i) const { return words()[i]; }
  const std::string& front() const { return words().front(); }
  const std::string& back() const { return words().back(); }

  // The same buffer (two empty SharedArgv made apart are not).
  bool shares(const SharedArgv& other) const { return words_ != nullptr && words_ == other.words_; }
  // How many SharedArgv hold this buffer (0 for one that holds none): tests and diagnostics.
  long use_count() const { return words_.use_count(); }

  friend bool operator==(const SharedArgv& a, const SharedArgv& b) {
    return a.words_ == b.words_ || a.words() == b.words();
  }
  friend bool operator==(const SharedArgv& a, const Words& b) { return a.words() == b; }

 private:
  static const Words& empty_words() {
    static const Words kEmpty;
    return kEmpty;
  }
  std::shared_ptr<const Words> words_;
};

}  // namespace codexd
