"""A kubeconfig whose user holds no credentials at all, against the emulator (which answers 401 without a token)."""

from __future__ import annotations

import yaml

from tests.kube.test_setup import kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures


async def test_a_user_with_no_credentials_is_told_so_naming_the_kubeconfig_and_user(server, kubeconfig, capsys) -> None:
    """It was told "the API server refused the kubeconfig's credentials: a wrong or expired token, or a client
    certificate it does not trust": there were none to be wrong, and the user looked for a token to renew."""
    config = yaml.safe_load(open(kubeconfig).read())
    user = config["users"][0]["name"]
    config["users"][0]["user"] = {}
    with open(kubeconfig, "w") as written:
        written.write(yaml.safe_dump(config))
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "wrong or expired token" not in err, err
    assert err.startswith(f"nvcre setup status: discovery: Unauthorized (kubeconfig {kubeconfig}, user {user}, holds no "
                          "credentials (no token, tokenFile, client certificate"), err
