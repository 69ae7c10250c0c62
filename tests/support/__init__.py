"""Test-only helpers shared by every test folder: the sandbox fixtures' building blocks and the
real-kubectl driver. Nothing here fakes a client; it only starts real things and runs them."""
