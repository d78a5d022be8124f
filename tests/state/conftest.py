from tests.state.redis_support import redis_server  # noqa: F401  (a fixture of every state test)
