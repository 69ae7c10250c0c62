"""`kubecrew demo`: numbered scenes that run end to end on a sandbox and check each step.

tour        the sandbox through real kubectl (alone: `python -m kubecrew.demo.tour`)
world       the demo's world: a sandbox, the shop, policies, a GitOps repository
scenes      the crew's scenes (heal, migration, ...), each step checked
gitops      the GitOps scene: deploy, probe, drift
governance  the governance scene: downscale, right-size, arbitration
turns       printing a scene's turns
"""
