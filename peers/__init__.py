"""The other queues, played for real against the lab's own server (issue 34)."""
