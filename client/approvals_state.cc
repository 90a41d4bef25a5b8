#include "client/approvals_state.h"

#include <algorithm>

#include "client/approvals_format.h"

namespace codexd::client {
namespace {

constexpr int kPage = 10;
constexpr const char* kPickHint = "pick a request with ↑/↓ (or j/k)";
constexpr const char* kKeysHelp = "keys: ↑↓ jk g G select · a once · s session · r remember · d deny · x abort · q quit";

std::optional<size_t> index_of(const std::vector<v1::ApprovalRequest>& list, const std::string& id) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].approval_id() == id) return i;
  }
  return std::nullopt;
}

void drop_last_code_point(std::string& text) {
  while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
  if (!text.empty()) text.pop_back();
}

}  // namespace

void ApprovalsState::stream_started() {
  resyncing_ = true;
  snapshot_.clear();
  connected_ = true;
  connection_problem_.clear();
}

bool ApprovalsState::added(const v1::ApprovalRequest& request) {
  const std::string& id = request.approval_id();
  const bool known = index_of(pending_, id) || index_of(snapshot_, id);
  if (resyncing_) {
    if (!index_of(snapshot_, id)) snapshot_.push_back(request);
    return ever_synced_ && !known;
  }
  if (known) return false;
  pending_.push_back(request);
  if (pending_.size() == 1 && selected_id_.empty()) selected_id_ = id;  // arrived in an empty list
  return true;
}

void ApprovalsState::resolved(const v1::ApprovalEvent::Resolved& resolved) {
  const std::string& id = resolved.approval_id();
  if (auto at = index_of(snapshot_, id)) snapshot_.erase(snapshot_.begin() + static_cast<std::ptrdiff_t>(*at));
  auto at = index_of(pending_, id);
  if (!at) return;
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(*at));
  if (id != selected_id_ && !selected_id_.empty()) return;
  if (id != selected_id_) {
    if (*at < cursor_hint_) --cursor_hint_;
    return;
  }
  cursor_hint_ = *at;
  after_removal(id, resolution_text(resolved));
}

// The selected request (or the one a reason is being written for) left the list.
void ApprovalsState::after_removal(const std::string& id, const std::string& how) {
  selected_id_.clear();
  if (reason_prompt_ && reason_prompt_->approval_id == id) {
    reason_prompt_.reset();
    status_ = visible_text(id) + " was " + how + " meanwhile; your reason was not sent";
  } else if (id != answered_here_) {
    status_ = visible_text(id) + " was " + how;
  }
}

void ApprovalsState::synced() {
  const bool was_empty = pending_.empty();
  resyncing_ = false;
  pending_ = std::move(snapshot_);
  snapshot_.clear();
  if (!selected_id_.empty() && !index_of(pending_, selected_id_)) after_removal(selected_id_, "answered while disconnected");
  if (!ever_synced_ || was_empty) select_first_if_none();
  ever_synced_ = true;
}

void ApprovalsState::select_first_if_none() {
  if (selected_id_.empty() && !pending_.empty()) {
    selected_id_ = pending_.front().approval_id();
    cursor_hint_ = 0;
  }
}

void ApprovalsState::disconnected(const std::string& why) {
  connected_ = false;
  connection_problem_ = why;
  resyncing_ = false;
  snapshot_.clear();
}

const v1::ApprovalRequest* ApprovalsState::selected() const {
  auto at = selected_index();
  return at ? &pending_[*at] : nullptr;
}

std::optional<size_t> ApprovalsState::selected_index() const {
  if (selected_id_.empty()) return std::nullopt;
  return index_of(pending_, selected_id_);
}

std::optional<Answer> ApprovalsState::on_key(const Key& key) {
  if (key.kind == KeyKind::kInterrupt) {
    quit_ = true;
    return std::nullopt;
  }
  return reason_prompt_ ? on_prompt_key(key) : on_list_key(key);
}

std::optional<Answer> ApprovalsState::on_list_key(const Key& key) {
  switch (key.kind) {
    case KeyKind::kUp: move_selection(-1); return std::nullopt;
    case KeyKind::kDown: move_selection(1); return std::nullopt;
    case KeyKind::kPageUp: move_selection(-kPage); return std::nullopt;
    case KeyKind::kPageDown: move_selection(kPage); return std::nullopt;
    case KeyKind::kHome: move_selection(-static_cast<int>(pending_.size())); return std::nullopt;
    case KeyKind::kEnd: move_selection(static_cast<int>(pending_.size())); return std::nullopt;
    case KeyKind::kText: break;
    default: return std::nullopt;
  }
  const std::string& c = key.text;
  if (c == "q") quit_ = true;
  else if (c == "k") move_selection(-1);
  else if (c == "j") move_selection(1);
  else if (c == "g") move_selection(-static_cast<int>(pending_.size()));
  else if (c == "G") move_selection(static_cast<int>(pending_.size()));
  else if (c == "a") return answer_selected(v1::APPROVED);
  else if (c == "s") return answer_selected(v1::APPROVED_FOR_SESSION);
  else if (c == "r") return answer_selected(v1::APPROVED_EXECPOLICY_AMENDMENT);
  else if (c == "d") return answer_selected(v1::DENIED);
  else if (c == "x") return answer_selected(v1::ABORT);
  else status_ = kKeysHelp;
  return std::nullopt;
}

void ApprovalsState::move_selection(int delta) {
  if (pending_.empty()) return;
  const size_t last = pending_.size() - 1;
  size_t to = std::min(cursor_hint_, last);  // nothing selected: where the selection was
  if (auto at = selected_index()) {
    const long moved = static_cast<long>(*at) + delta;
    to = static_cast<size_t>(std::clamp(moved, 0L, static_cast<long>(last)));
  }
  selected_id_ = pending_[to].approval_id();
  cursor_hint_ = to;
}

// Approvals go at once; a denial or an abort first asks for its reason on the bottom line.
std::optional<Answer> ApprovalsState::answer_selected(v1::ReviewDecision decision) {
  const v1::ApprovalRequest* request = selected();
  if (!request) {
    status_ = std::string("nothing selected: ") + kPickHint;
  } else if (!connected_) {
    status_ = "not connected to codexd: no answer can be sent until it is back";
  } else if (decision == v1::APPROVED_EXECPOLICY_AMENDMENT && !can_remember(*request)) {
    status_ = visible_text(request->approval_id()) +
              " proposes no rule to remember: nothing was sent (a approves once, s for the session)";
  } else if (decision == v1::DENIED || decision == v1::ABORT) {
    reason_prompt_ = Answer{request->approval_id(), decision, ""};
  } else {
    answered_here_ = request->approval_id();
    return Answer{request->approval_id(), decision, ""};
  }
  return std::nullopt;
}

std::optional<Answer> ApprovalsState::on_prompt_key(const Key& key) {
  std::string& reason = reason_prompt_->rationale;
  switch (key.kind) {
    case KeyKind::kEnter: {
      if (!connected_) {
        status_ = "not connected to codexd: Enter again once it is back, or Esc";
        return std::nullopt;
      }
      Answer answer = std::move(*reason_prompt_);
      reason_prompt_.reset();
      answered_here_ = answer.approval_id;
      return answer;
    }
    case KeyKind::kEscape:
      status_ = visible_text(reason_prompt_->approval_id) + ": not denied (cancelled; nothing was sent)";
      reason_prompt_.reset();
      break;
    case KeyKind::kBackspace: drop_last_code_point(reason); break;
    case KeyKind::kKillLine: reason.clear(); break;
    case KeyKind::kText:
      if (reason.size() + key.text.size() <= kMaxReasonBytes) reason += key.text;
      else status_ = "a reason is at most " + std::to_string(kMaxReasonBytes) + " bytes";
      break;
    default: break;
  }
  return std::nullopt;
}

void ApprovalsState::answer_sent(const Answer& answer, const std::optional<std::string>& error) {
  const std::string id = visible_text(answer.approval_id);
  if (error) {
    status_ = id + ": not answered: " + *error;
    return;
  }
  status_ = id + ": " + decision_text(answer.decision);
  if (answer.decision == v1::DENIED || answer.decision == v1::ABORT) {
    status_ += answer.rationale.empty() ? " (no reason given)" : " (reason: " + visible_text(answer.rationale) + ")";
  }
}

}  // namespace codexd::client
