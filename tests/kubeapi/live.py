"""Live nodes and pods for the test API server: state that changes, the way kube-apiserver's does.

The recorded responses (server.py) replay what a real kube-apiserver said; this store answers what it
would say next. `KubeAPI(live=LiveCluster(...))` serves from it:

- `GET /api/v1/nodes`, `/api/v1/pods`, `/api/v1/namespaces/NS/pods` (lists with a resourceVersion),
  and the same with `?watch=true&resourceVersion=RV` (every event after RV, in order, then live);
- `POST /api/v1/namespaces/NS/pods/NAME/binding` (a v1 Binding; its `metadata.uid`, when given, must
  be the pod's, and a bound pod cannot be bound again: 409, as kube-apiserver answers; the node is not
  checked: the real one binds to a node that does not exist);
- `GET /api/v1/namespaces/NS/pods/NAME`.

Shapes follow the recordings in tests/fixtures/k8s: list items without kind/apiVersion, watch objects
with them, a binding as a MODIFIED event that sets `spec.nodeName` and `PodScheduled=True`, a forced
delete as a DELETED event. Tests (and the kube-scheduler stand-in) change state with `create_pod`,
`bind`, `set_unschedulable` and `delete_pod` directly, and can delay what one watch stream sees
(`delay`: a function of the event, e.g. seeded random latency for bindings); a stream never reorders.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Event:
    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    kind: str  # Pod, Node
    obj: dict  # the object as of this event (with kind/apiVersion)
    at: float  # time.monotonic() when it happened
    binds: bool = False  # the MODIFIED event of a binding

    def line(self) -> bytes:
        return json.dumps({"type": self.type, "object": self.obj}, separators=(",", ":")).encode()


class Conflict(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


class LiveCluster:
    """Nodes and pods with resourceVersions, an event log, and listeners (the stand-in's informer)."""

    def __init__(self, nodes: list[dict], rv: int = 1000) -> None:
        self._lock = threading.Condition()
        self.rv = rv
        self.nodes: dict[str, dict] = {}
        self.pods: dict[tuple[str, str], dict] = {}
        self.namespaces: dict[str, dict] = {}
        self.log: list[Event] = []
        self.listeners: list[Callable[[Event], None]] = []
        self.delay: Callable[[Event], float] = lambda event: 0.0
        self.closed = False
        for node in nodes:
            obj = copy.deepcopy(node)
            obj.setdefault("kind", "Node")
            obj.setdefault("apiVersion", "v1")
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            self.nodes[obj["metadata"]["name"]] = obj

    # -- changes ---------------------------------------------------------------------------------
    def _emit(self, type_: str, kind: str, obj: dict, binds: bool = False) -> Event:
        """Call with the lock held; listeners run after it is released (see the callers)."""
        event = Event(self.rv, type_, kind, copy.deepcopy(obj), time.monotonic(), binds)
        self.log.append(event)
        self._lock.notify_all()
        return event

    def _notify(self, event: Event) -> None:
        for listener in list(self.listeners):
            listener(event)

    def create_pod(self, pod: dict) -> dict:
        with self._lock:
            obj = copy.deepcopy(pod)
            meta = obj.setdefault("metadata", {})
            key = (meta.setdefault("namespace", "default"), meta["name"])
            if key in self.pods:
                raise Conflict(409, "AlreadyExists", f'pods "{meta["name"]}" already exists')
            obj["kind"], obj["apiVersion"] = "Pod", "v1"
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            obj.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
            obj["status"] = {"phase": "Pending", "qosClass": "Burstable"}
            self.rv += 1
            meta["resourceVersion"] = str(self.rv)
            self.pods[key] = obj
            event = self._emit("ADDED", "Pod", obj)
        self._notify(event)
        return copy.deepcopy(obj)

    def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> dict:
        """What `POST pods/NAME/binding` does; Conflict for what kube-apiserver refuses."""
        with self._lock:
            obj = self.pods.get((namespace, name))
            if obj is None:
                raise Conflict(404, "NotFound", f'pods "{name}" not found')
            if uid and obj["metadata"]["uid"] != uid:  # the storage layer's precondition, worded as v1.37.2 does
                raise Conflict(409, "Conflict", f"Operation cannot be fulfilled on pods \"{name}\": StorageError: "
                               f"invalid object, Code: 4, Key: /registry/pods/{namespace}/{name}, ResourceVersion: 0, "
                               f"AdditionalErrorMsg: Precondition failed: UID in precondition: {uid}, UID in object "
                               f"meta: {obj['metadata']['uid']}")
            if obj["spec"].get("nodeName"):
                raise Conflict(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{name}": '
                               f'pod {name} is already assigned to node "{obj["spec"]["nodeName"]}"')
            # no check that the node exists: kube-apiserver v1.37.2 binds to any node name (201)
            obj["spec"]["nodeName"] = node
            conditions = [c for c in obj["status"].get("conditions", []) if c.get("type") != "PodScheduled"]
            conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                               "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
            obj["status"]["conditions"] = conditions
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            event = self._emit("MODIFIED", "Pod", obj, binds=True)
        self._notify(event)
        return copy.deepcopy(obj)

    def set_unschedulable(self, namespace: str, name: str, message: str) -> None:
        """kube-scheduler's status patch after a failed attempt (PodScheduled=False)."""
        with self._lock:
            obj = self.pods.get((namespace, name))
            if obj is None or obj["spec"].get("nodeName"):
                return
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                            "message": message, "lastProbeTime": None}]
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            event = self._emit("MODIFIED", "Pod", obj)
        self._notify(event)

    def delete_pod(self, namespace: str, name: str) -> bool:
        """A forced delete (`--grace-period=0 --force`): gone at once."""
        with self._lock:
            obj = self.pods.pop((namespace, name), None)
            if obj is None:
                return False
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            event = self._emit("DELETED", "Pod", obj)
        self._notify(event)
        return True

    # -- objects a client creates (kubeview bench scheduler --kubeconfig) -------------------------
    def create_namespace(self, obj: dict) -> dict:
        with self._lock:
            name = obj["metadata"]["name"]
            if name in self.namespaces:
                raise Conflict(409, "AlreadyExists", f'namespaces "{name}" already exists')
            self.namespaces[name] = copy.deepcopy(obj)
            return copy.deepcopy(obj)

    def delete_namespace(self, name: str) -> None:
        """The namespace controller's work done at once: its pods go, then it does."""
        with self._lock:
            if name not in self.namespaces:
                raise Conflict(404, "NotFound", f'namespaces "{name}" not found')
        self.delete_pods(name)
        with self._lock:
            self.namespaces.pop(name, None)

    def create_node(self, node: dict) -> dict:
        """POST /api/v1/nodes: the status a client sends is kept, as kube-apiserver v1.37.2 does (a
        kubelet registers with its capacity; tests/realk8s creates kwok nodes that way)."""
        with self._lock:
            obj = copy.deepcopy(node)
            meta = obj.setdefault("metadata", {})
            if meta["name"] in self.nodes:
                raise Conflict(409, "AlreadyExists", f'nodes "{meta["name"]}" already exists')
            obj["kind"], obj["apiVersion"] = "Node", "v1"
            obj.setdefault("status", {})
            meta["uid"] = str(uuid.uuid4())
            self.rv += 1
            meta["resourceVersion"] = str(self.rv)
            self.nodes[meta["name"]] = obj
            event = self._emit("ADDED", "Node", obj)
        self._notify(event)
        return copy.deepcopy(obj)

    def patch_node_status(self, name: str, patch: dict) -> dict:
        """PATCH nodes/NAME/status with a merge patch of `status` (all the bench sends)."""
        with self._lock:
            obj = self.nodes.get(name)
            if obj is None:
                raise Conflict(404, "NotFound", f'nodes "{name}" not found')
            obj["status"].update(copy.deepcopy(patch.get("status") or {}))
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            event = self._emit("MODIFIED", "Node", obj)
        self._notify(event)
        return copy.deepcopy(obj)

    def delete_nodes(self, selector: dict[str, str]) -> int:
        """DELETE /api/v1/nodes?labelSelector=k=v,...: every node with those labels."""
        with self._lock:
            names = [n for n, o in self.nodes.items() if _matches(o, selector)]
            events = []
            for name in names:
                obj = self.nodes.pop(name)
                self.rv += 1
                obj["metadata"]["resourceVersion"] = str(self.rv)
                events.append(self._emit("DELETED", "Node", obj))
        for event in events:
            self._notify(event)
        return len(names)

    def delete_pods(self, namespace: str) -> int:
        """DELETE /api/v1/namespaces/NS/pods with gracePeriodSeconds=0: all of them, gone at once."""
        with self._lock:
            names = [n for (ns, n) in self.pods if ns == namespace]
        return sum(self.delete_pod(namespace, n) for n in names)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self._lock.notify_all()

    # -- reading ---------------------------------------------------------------------------------
    def pod(self, namespace: str, name: str) -> dict | None:
        with self._lock:
            obj = self.pods.get((namespace, name))
            return copy.deepcopy(obj) if obj is not None else None

    def list_body(self, kind: str, namespace: str | None = None, selector: dict[str, str] | None = None,
                  fields: dict[str, str] | None = None) -> bytes:
        """A list, filtered by labels and by fields (`spec.nodeName`, `metadata.name`, ...: a dotted
        path equal to a value, as kube-apiserver's field selectors for pods)."""
        with self._lock:
            source = self.nodes.values() if kind == "Node" else (
                p for (ns, _), p in self.pods.items() if namespace is None or ns == namespace)
            items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in source
                     if _matches(o, selector or {}) and _fields_match(o, fields or {})]
            body = {"kind": f"{kind}List", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.rv)},
                    "items": items}
            return json.dumps(body, separators=(",", ":")).encode()

    def stream(self, kind: str, since: int, namespace: str | None, alive: Callable[[], bool],
               deadline: float):
        """Event lines of `kind` after resourceVersion `since`, as they happen, each held back by
        `delay(event)` without reordering, until `alive()` is False or `deadline` (monotonic) passes."""
        cursor = next((i for i, e in enumerate(self.log) if e.rv > since), len(self.log))
        released = 0.0
        while alive() and time.monotonic() < deadline:
            with self._lock:
                while cursor >= len(self.log) and not self.closed and alive() and time.monotonic() < deadline:
                    self._lock.wait(0.05)
                if self.closed:
                    return
                batch = self.log[cursor:]
                cursor = len(self.log)
            for event in batch:
                if event.kind != kind or (namespace and event.obj["metadata"].get("namespace") != namespace):
                    continue
                released = max(released, event.at + max(0.0, self.delay(event)))
                wait = released - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                yield event.line()


def _fields_match(obj: dict, fields: dict[str, str]) -> bool:
    for path, want in fields.items():
        value: object = obj
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if (value or "") != want:
            return False
    return True


def parse_selector(text: str | None) -> dict[str, str]:
    """An equality-based labelSelector (`a=b,c=d`), all the clients here send."""
    out = {}
    for part in (text or "").split(","):
        if part.strip():
            key, _, value = part.partition("=")
            out[key.strip()] = value.strip().lstrip("=")
    return out


def _matches(obj: dict, selector: dict[str, str]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())
