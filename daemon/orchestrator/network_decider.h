// The network proxy's decider: assess_network on the core thread, and for a host nothing
// names, a network approval that any reviewer answers (once, for the session, or remembered
// as a network_rule in the amend file). Connections to the same host that arrive while its
// approval is pending wait for that one answer instead of asking again.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "daemon/config/config.h"
#include "daemon/network/proxy_types.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/network_assessment.h"
#include "daemon/orchestrator/policy_store.h"

namespace codexd::orchestrator {

struct NetworkDeciderDeps {
  boost::asio::io_context* core = nullptr;  // where the broker, the cache and the policy live
  const config::Config* config = nullptr;
  const PolicyStore* policies = nullptr;
  ApprovalBroker* broker = nullptr;
  // Appends network_rule(host, protocol, "allow") and reloads; `then` on the core thread.
  // Empty: "remember" is a plain approval.
  std::function<void(std::string host, std::string protocol, std::function<void()> then)> remember;
};

class NetworkDecider final : public network::NetworkDecider {
 public:
  explicit NetworkDecider(NetworkDeciderDeps deps) : deps_(std::move(deps)) {}

  void decide(const network::ProxyOrigin& origin, const network::ConnectTarget& target,
              std::function<void(network::NetworkVerdict)> done) override;
  void decide_for(uint64_t request_id, const network::ProxyOrigin& origin, const network::ConnectTarget& target,
                  std::function<void(network::NetworkVerdict)> done) override;
  // The connection went away: it stops waiting, and an approval nobody else waits for is
  // abandoned (reviewers see it resolved as "requester_disconnected").
  void withdraw(uint64_t request_id) override;

 private:
  using Done = std::function<void(network::NetworkVerdict)>;
  // uid, agent, host, port, protocol
  using Key = std::tuple<uid_t, std::string, std::string, uint16_t, std::string>;
  // The connections waiting for one approval; `approval` identifies that request (its id is
  // filled in once the broker returns it), so a late answer to a withdrawn one finds nobody.
  struct Waiting {
    std::shared_ptr<std::string> approval;
    std::vector<std::pair<uint64_t, Done>> waiters;  // (request id, done)
  };

  void decide_on_core(uint64_t request_id, const network::ProxyOrigin& origin, const network::ConnectTarget& target,
                      Done done);
  void ask_reviewer(const network::ProxyOrigin& origin, const network::ConnectTarget& target, Key key,
                    const NetworkAssessment& assessment);
  void answer(const Key& key, const std::shared_ptr<std::string>& approval, const ApprovalOutcome& outcome,
              const network::ConnectTarget& target);
  void withdraw_on_core(uint64_t request_id);
  void finish_waiters(const Key& key, const network::NetworkVerdict& verdict);
  // An allowing verdict, limited when the agent's network is ([agents."x"] network_limited, else
  // [network] limited).
  network::NetworkVerdict allowed(std::string reason, bool non_public, const std::string& agent_id) const;

  NetworkDeciderDeps deps_;
  std::map<Key, Waiting> waiting_;            // one approval per key in flight
  std::set<Key> approved_for_session_;        // core thread only
};

}  // namespace codexd::orchestrator
