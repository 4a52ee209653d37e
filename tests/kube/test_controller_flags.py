"""`nvcre controller` flags that would harm others: a holder identity other users' terminals would obey, a Lease
duration so short its renewals flood the API server. One line naming the flag, exit 2, before any cluster is asked."""

from __future__ import annotations

import argparse

import pytest

from nvcre_tui.cli import controller, main

NOWHERE = "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n" \
          "contexts: [{name: c, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"


@pytest.mark.parametrize(("flags", "message"), [
    (["--lease-duration", "0.001"], "--lease-duration: must be 3 to 3600 seconds (an hour), got 0.001"),
    (["--lease-duration", "2.9"], "--lease-duration: must be 3 to 3600 seconds (an hour), got 2.9"),
    (["--lease-duration", "nan"], "--lease-duration: must be 3 to 3600 seconds (an hour), got nan"),
    (["--identity", "\x1b]0;pwned\x07ctl"], "--identity: the lease holder identity must be printable text on one line "
                                             "(no control characters or line breaks), got '\\x1b]0;pwned\\x07ctl'"),
    (["--identity", "ctl\nengine held by nobody"], "--identity: the lease holder identity must be printable text on one line "
                                                    "(no control characters or line breaks), got 'ctl\\nengine held by nobody'"),
    # binding encoded the name as IDNA: its UnicodeError was an internal error, exit 70, once the cluster was asked
    (["--metrics-addr", "a..b"], "--metrics-addr: not an IP address or host name (labels of 1 to 63 letters, digits and '-', "
                                 "dot-separated), got 'a..b'"),
    (["--metrics-addr", "x" * 64], "--metrics-addr: not an IP address or host name (labels of 1 to 63 letters, digits and '-', "
                                   f"dot-separated), got {'x' * 64!r}"),
    (["--metrics-addr", "node-\udcff"], "--metrics-addr: not an IP address or host name (labels of 1 to 63 letters, digits and "
                                        "'-', dot-separated), got 'node-\\udcff'"),
])
def test_harmful_flags_are_one_line_before_the_cluster_is_asked(flags: list[str], message: str, tmp_path, capsys) -> None:
    kubeconfig = tmp_path / "kubeconfig"  # nobody answers there: it must not be asked
    kubeconfig.write_text(NOWHERE)
    assert main(["controller", "--kubeconfig", str(kubeconfig), "--metrics-port", "0", *flags]) == 2
    assert capsys.readouterr().err == message + "\n"


def test_a_pod_name_with_a_line_break_is_refused_as_the_identity(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setenv("POD_NAME", "nvcre-controller-0\r\x1b[2K")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(NOWHERE)
    assert main(["controller", "--kubeconfig", str(kubeconfig), "--metrics-port", "0"]) == 2
    assert capsys.readouterr().err.startswith("$POD_NAME: the lease holder identity must be printable text on one line")


@pytest.mark.parametrize("flags", [["--lease-duration", "3"], ["--lease-duration", "3600"], ["--identity", "ctl-1 on node a"],
                                   ["--metrics-addr", "::1"], ["--metrics-addr", "metrics.example.com"], ["--metrics-addr", "ünï.example"]])
def test_sane_values_pass_the_checks(flags: list[str], monkeypatch) -> None:
    monkeypatch.delenv("POD_NAME", raising=False)
    parser = argparse.ArgumentParser(prog="nvcre")
    controller.register(parser.add_subparsers())
    controller._check(parser.parse_args(["controller", *flags]))


def test_a_cluster_that_does_not_answer_is_exit_2_as_for_every_command(tmp_path, capsys) -> None:
    """The controller exited 1 where `certification list` and `setup status` exit 2; 1 is left for a lost Lease."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(NOWHERE.replace("https://", "http://"))
    assert main(["controller", "--kubeconfig", str(kubeconfig), "--metrics-port", "0"]) == 2
    err = capsys.readouterr().err
    assert "cannot connect to http://127.0.0.1:1" in err and "Traceback" not in err
