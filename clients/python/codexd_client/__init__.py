"""Python client for codexd (see README.md). The generated messages are codexd.v1.*_pb2."""
from codexd_client.client import (AGENT_ID_METADATA_KEY, Client, CodexdError,
                                  default_socket_path)

__all__ = ["AGENT_ID_METADATA_KEY", "Client", "CodexdError", "default_socket_path"]
