#include "daemon/orchestrator/network_decider.h"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace codexd::orchestrator {
namespace {

network::NetworkVerdict refused(std::string reason) {
  network::NetworkVerdict v;
  v.allowed = false;
  v.reason = std::move(reason);
  return v;
}

std::string how_to_ask(const std::string& host, const std::string& protocol) {
  return " (to allow it: add \"" + host + "\" to [network] allow, or network_rule(host=\"" + host +
         "\", protocol=\"" + protocol + "\", decision=\"allow\") to a rules file)";
}

}  // namespace

network::NetworkVerdict NetworkDecider::allowed(std::string reason, bool non_public, const std::string& agent_id) const {
  network::NetworkVerdict v;
  v.allowed = true;
  v.reason = std::move(reason);
  v.allow_non_public = non_public;
  v.limited = deps_.config->network_limited_for(agent_id);
  return v;
}

void NetworkDecider::decide(const network::ProxyOrigin& origin, const network::ConnectTarget& target, Done done) {
  decide_for(0, origin, target, std::move(done));
}

void NetworkDecider::decide_for(uint64_t request_id, const network::ProxyOrigin& origin,
                                const network::ConnectTarget& target, Done done) {
  boost::asio::post(*deps_.core, [this, request_id, origin, target, done = std::move(done)]() mutable {
    decide_on_core(request_id, origin, target, std::move(done));
  });
}

void NetworkDecider::withdraw(uint64_t request_id) {
  if (request_id == 0) return;
  boost::asio::post(*deps_.core, [this, request_id] { withdraw_on_core(request_id); });
}

void NetworkDecider::withdraw_on_core(uint64_t request_id) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    auto& waiters = it->second.waiters;
    auto mine = std::find_if(waiters.begin(), waiters.end(), [&](const auto& w) { return w.first == request_id; });
    if (mine == waiters.end()) continue;
    waiters.erase(mine);
    if (!waiters.empty()) return;  // others still wait for the same answer
    std::shared_ptr<std::string> approval = it->second.approval;
    waiting_.erase(it);
    if (approval && !approval->empty()) deps_.broker->abandon(*approval);
    return;
  }
}

void NetworkDecider::decide_on_core(uint64_t request_id, const network::ProxyOrigin& origin,
                                    const network::ConnectTarget& target, Done done) {
  const std::string protocol(network::to_string(target.protocol));
  NetworkQuestion question{origin.agent_id, target.host, target.port, protocol};
  NetworkAssessment assessment = assess_network(*deps_.config, *deps_.policies->current(), question);
  switch (assessment.decision) {
    case NetworkDecision::kAllow:
      done(allowed(assessment.reason, assessment.names_host_exactly, origin.agent_id));
      return;
    case NetworkDecision::kForbidden:
      done(refused(assessment.reason + how_to_ask(target.host, protocol)));
      return;
    case NetworkDecision::kPrompt:
      break;
  }
  Key key{origin.uid, origin.agent_id, target.host, target.port, protocol};
  if (approved_for_session_.count(key) != 0) {
    done(allowed("approved for the session by a reviewer", is_ip_literal(target.host), origin.agent_id));
    return;
  }
  auto [it, first] = waiting_.try_emplace(key);
  it->second.waiters.emplace_back(request_id, std::move(done));
  if (first) ask_reviewer(origin, target, key, assessment);
}

void NetworkDecider::ask_reviewer(const network::ProxyOrigin& origin, const network::ConnectTarget& target, Key key,
                                  const NetworkAssessment& assessment) {
  ApprovalTicket ticket;
  ticket.requester_uid = origin.uid;
  ticket.agent_id = origin.agent_id;
  ticket.cmd = origin.command;
  ticket.reason = {ApprovalReason::Kind::kNetwork,
                   "connect to " + target.host + ":" + std::to_string(target.port) + " (" +
                       std::string(network::to_string(target.protocol)) + "): " + assessment.reason,
                   {}};
  ticket.network = NetworkAccessText{target.host, target.port, std::string(network::to_string(target.protocol)),
                                     static_cast<int>(origin.session_id)};
  if (Status room = deps_.broker->has_room(ticket); !room.ok()) {
    finish_waiters(key, refused("no reviewer can be asked now: " + room.message()));
    return;
  }
  auto approval = std::make_shared<std::string>();
  waiting_[key].approval = approval;
  std::string id = deps_.broker->request(std::move(ticket), [this, key, target, approval](const ApprovalOutcome& outcome) {
    answer(key, approval, outcome, target);
  });
  *approval = std::move(id);
}

void NetworkDecider::answer(const Key& key, const std::shared_ptr<std::string>& approval,
                            const ApprovalOutcome& outcome, const network::ConnectTarget& target) {
  auto waiting = waiting_.find(key);
  if (waiting == waiting_.end() || waiting->second.approval != approval) return;  // withdrawn
  const std::string protocol(network::to_string(target.protocol));
  if (outcome.kind != ApprovalOutcome::Kind::kDecided) {
    finish_waiters(key, refused(std::string("no reviewer answered (") + outcome_source_name(outcome.kind) + ")" +
                                    how_to_ask(target.host, protocol)));
    return;
  }
  // A reviewer who approved a name has not seen the address it resolves to; only an approved
  // IP literal may be a non-public one.
  const bool literal = is_ip_literal(target.host);
  switch (outcome.decision) {
    case ReviewDecision::kApproved:
      finish_waiters(key, allowed("approved once by a reviewer", literal, std::get<1>(key)));
      return;
    case ReviewDecision::kApprovedForSession:
      approved_for_session_.insert(key);
      finish_waiters(key, allowed("approved for the session by a reviewer", literal, std::get<1>(key)));
      return;
    case ReviewDecision::kApprovedWithAmendment:
      if (deps_.remember) {
        deps_.remember(target.host, protocol, [this, key, literal] {
          finish_waiters(key, allowed("approved and remembered as a network_rule", literal, std::get<1>(key)));
        });
        return;
      }
      finish_waiters(key, allowed("approved once by a reviewer (amendments are disabled)", literal, std::get<1>(key)));
      return;
    case ReviewDecision::kDenied:
    case ReviewDecision::kAbort:
      finish_waiters(key, refused("denied by a reviewer"));
      return;
  }
}

void NetworkDecider::finish_waiters(const Key& key, const network::NetworkVerdict& verdict) {
  auto it = waiting_.find(key);
  if (it == waiting_.end()) return;
  std::vector<std::pair<uint64_t, Done>> waiters = std::move(it->second.waiters);
  waiting_.erase(it);
  for (auto& [request_id, done] : waiters) done(verdict);
}

}  // namespace codexd::orchestrator
