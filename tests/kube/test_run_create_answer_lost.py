"""`certification run` whose create the API server committed but whose answer was lost (a 503 or 504 after the write,
a connection cut): the client's retry meets the certification this command made."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from tests.kube.cluster import certification_names, installed_in_thread
from tests.kube.test_edit_user_certifies import _register, _run
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kubeapi import Fault


def test_a_create_committed_but_answered_503_is_this_runs_certification_not_a_name_taken(tmp_path: Path,
                                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """It said "certification 'c-1' already exists ...; use another --name" and exited 2, while the certification was
    this command's own and ran: following that advice started the same run twice on the GPUs. Another's certification of
    that name is still refused (no retry was involved)."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        lost = server.faults.add(Fault(method="POST", path=r"/certifications$", status=503, after_commit=True, times=1))
        capsys.readouterr()
        assert main(_run(kubeconfig, tmp_path, "c-1")) == 0
        err = capsys.readouterr().err
        assert lost.hits == 1 and ("Certification c-1 created in namespace default (cluster emulator · default; the server's "
                                   "answer was lost, its retry found it made).") in err, err
        assert "already exists" not in err and asyncio.run(certification_names(kubeconfig)) == ["c-1"]
        assert main(_run(kubeconfig, tmp_path, "c-1")) == 2  # a name taken, without any lost answer: refused as before
        assert "--name: certification 'c-1' already exists" in capsys.readouterr().err
