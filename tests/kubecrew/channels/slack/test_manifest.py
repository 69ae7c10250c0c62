"""The Slack app manifest shipped in slack/ asks for what the app uses, and no more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MANIFEST = Path(__file__).parents[4] / "slack" / "manifest.yaml"


def test_the_manifest_subscribes_to_what_the_app_handles_with_the_scopes_it_needs() -> None:
    manifest: dict[str, Any] = yaml.safe_load(MANIFEST.read_text())
    assert set(manifest) == {
        "_metadata",
        "display_information",
        "features",
        "oauth_config",
        "settings",
    }
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True  # the command's default mode
    assert settings["interactivity"]["is_enabled"] is True  # the Approve / Deny buttons
    # conversation.route_messages: app_mention, and message events of channel_type im
    assert sorted(settings["event_subscriptions"]["bot_events"]) == ["app_mention", "message.im"]
    # chat.postMessage / chat.update / chat.postEphemeral, and reading those two events
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == [
        "app_mentions:read",
        "chat:write",
        "commands",
        "im:history",
    ]
    # conversation.route_messages: the slash command
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/kubecrew"]
    assert manifest["features"]["bot_user"]["display_name"] == "kubecrew"
