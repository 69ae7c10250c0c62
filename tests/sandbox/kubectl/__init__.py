"""The kubectl compatibility suite: the real kubectl 1.37 binary driven against the sandbox.

Each test runs kubectl as a user would and checks two things: what the user sees (columns,
names, messages) and the state the sandbox ends up in. What several of the suite's files share
lives in suite.py; fixtures in tests/conftest.py and this folder's conftest.py.
"""
