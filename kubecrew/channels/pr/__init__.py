"""The pull-request channel: the crew's PRs as a place people answer and amend changes.

approvals     reviews on a PR answer the approval request it carries
comments      `@kubecrew` comments: who may say what, read once each
amendments    what an amending comment changes in the manifest
changes       the change a PR carries, read from its body and branch
supersession  a newer change for the same target closes the older PR
"""
