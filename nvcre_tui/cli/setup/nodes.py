"""The Nodes `--sim-runner` registered: found by who wrote their simulated label, deleted by reset."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcre_tui.cli.oneline import say
from nvcre_tui.cli.setup.shared import Obj
from nvcre_tui.engine.api.vocabulary import LABEL_SIMULATED
from nvcre_tui.engine.units import count, listed

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.store.kube import KubeStore


async def simulated_nodes(store: KubeStore) -> tuple[list[Obj], list[str]]:
    """The Nodes `--sim-runner` registered, and the names of those labelled simulated that it did not. Registered means
    the simulator itself set their simulated label (the server's managedFields say who set each field, on any API
    server, and for the Nodes an older nvcre registered too): a Node merely labelled simulated (a real one someone
    labelled, a copy of a simulated one) is never deleted."""
    from nvcre_tui.engine.sim.fleet import registered_by_simulator
    from nvcre_tui.engine.store.protocol import NODE

    # every Node, not those labelled simulated: an older simulator registered its Nodes without the label
    nodes = (await store.list(NODE)).items
    return ([node for node in nodes if registered_by_simulator(node)],
            [node["metadata"]["name"] for node in nodes
             if (node["metadata"].get("labels") or {}).get(LABEL_SIMULATED) == "true" and not registered_by_simulator(node)])


async def remove_simulated_nodes(store: KubeStore, registered: list[Obj], strangers: list[str]) -> None:
    """Delete the Nodes `--sim-runner` registered (left behind they look like Ready GPU nodes that a later run targets),
    said in one line, not one per Node; one line names those labelled simulated that it did not register, which stay."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import NODE

    deleted = []
    for node in registered:
        try:
            await store.delete(NODE, node["metadata"]["name"])
            deleted.append(node["metadata"]["name"])
        except NotFound:
            pass
    if deleted:
        print(f"deleted the {count(len(deleted), 'simulated Node')} --sim-runner registered: {listed(deleted, 3)}")
    if strangers:
        say(f"nvcre setup reset: left {count(len(strangers), 'Node')} labelled {LABEL_SIMULATED}=true that the simulator did not "
             f"register (another client set that label): {listed(strangers, 3)}; nvcre never deletes a Node it did not make")
