"""`kubeview extender`: serve kube-scheduler's extender API with kubeview's GPU-packing scores.

The cluster model is fed by the kubeconfig's cluster (in a pod: the in-cluster config), watching
only nodes and pods (what its RBAC allows), or by the embedded local cluster with `--local`. The
server starts at once; `/readyz` says 503 until nodes and pods are listed. SIGINT/SIGTERM stop it.
Every failure a user can cause is one line on stderr: exit code 2 for bad input (`--listen`,
`--policy`, a non-loopback `--listen` with no authentication, see scheduling/listen_guard.py), 1 for
the environment (files, the cluster, the port).
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
import threading
from pathlib import Path

from kubeview import cli_types as t
from kubeview.cluster.source import SourceError, TalksToKube
from kubeview.commands.options import connection_options
from kubeview.hostport import parse_listen
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.lookup_budget import LookupLimits
from kubeview.scheduling.server_limits import MiB, ServerLimits, TLSFiles

log = logging.getLogger("kubeview.extender")
WATCHED = ("Node", "Pod")


def _read_token(path: str | None) -> str | None:
    if not path:
        return None
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise ValueError(f"cannot read the token file {path}: {exc.strerror}") from exc
    if not token:
        raise ValueError(f"the token file {path} is empty")
    return token


def _limits(args: argparse.Namespace) -> tuple[ServerLimits, TLSFiles | None]:
    """The server's limits and TLS files from the options (ValueError: one sentence)."""
    cert, key, ca = getattr(args, "tls_cert", None), getattr(args, "tls_key", None), getattr(args, "client_ca", None)
    if bool(cert) != bool(key):
        raise ValueError("--tls-cert and --tls-key go together")
    if ca and not cert:
        raise ValueError("--client-ca needs --tls-cert and --tls-key (client certificates are a TLS feature)")
    d = ServerLimits()
    limits = ServerLimits(
        max_connections=getattr(args, "max_connections", d.max_connections),
        header_timeout=getattr(args, "header_timeout", d.header_timeout),
        body_timeout=getattr(args, "body_timeout", d.body_timeout),
        idle_timeout=getattr(args, "idle_timeout", d.idle_timeout),
        max_body=getattr(args, "max_body_mib", d.max_body // MiB) * MiB,
        max_bodies_in_flight=getattr(args, "max_bodies_in_flight_mib", d.max_bodies_in_flight // MiB) * MiB)
    return limits, (TLSFiles(cert, key, ca) if cert and key else None)


def _open_source(args: argparse.Namespace):
    from kubeview.cluster.select import wants_kube

    if wants_kube(args):
        from kubeview.cluster.kube.source import KubeSource

        return KubeSource(kubeconfig=getattr(args, "kubeconfig", None), context=getattr(args, "context", None),
                          namespace=getattr(args, "namespace", None), kinds=WATCHED,
                          gangs=False,  # scoring is per pod: the extender has no use for gangs
                          autoscaling=False)  # nor for node groups (its role reads neither)
    from kubeview.cluster.local.source import LocalSource

    return LocalSource(getattr(args, "cluster", None))


NAME = "extender"  # `kubeview extender`


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    ext = sub.add_parser(NAME, parents=[connection_options(True, ("cluster",))],
                         help="serve the kube-scheduler extender (GPU packing)",
                         description="Serve kube-scheduler's extender API (prioritize; filter, and bind for a "
                                     "configuration with bindVerb, too) with kubeview's scoring.")
    ext.add_argument("--listen", default="127.0.0.1:8888", help="HOST:PORT (default: 127.0.0.1:8888)")
    ext.add_argument("--token-file", metavar="FILE", help="token required by PUT /config")
    ext.add_argument("--insecure-allow-unauthenticated", action="store_true",
                     help="listen on a non-loopback address with neither --token-file nor --client-ca "
                          "(anyone who reaches it can change GPU placement)")
    ext.add_argument("--policy", default="pack", help="initial policy: pack, spread or balanced (default: pack)")
    ext.add_argument("--scheduler-ignores", metavar="RES[,RES]", type=t.distinct_names, default=[],
                     help="resources the scheduler configuration lists with ignoredByScheduler: true, the only ones "
                          "the filter verb refuses nodes on (default: none; see docs/scheduler.md)")
    _limit_options(ext)
    return ext


def _limit_options(ext: argparse.ArgumentParser) -> None:
    """TLS files and connection limits (defaults: ServerLimits)."""
    d = ServerLimits()
    tls = ext.add_argument_group("TLS (kube-scheduler's enableHTTPS and tlsConfig)")
    tls.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate (needs --tls-key)")
    tls.add_argument("--tls-key", metavar="FILE", help="the certificate's PEM private key")
    tls.add_argument("--client-ca", metavar="FILE",
                     help="require a client certificate signed by this PEM CA (tlsConfig certData/keyData)")
    lim = ext.add_argument_group("limits against hostile clients")
    lim.add_argument("--max-connections", type=t.int_range(1, 1_000_000), default=d.max_connections,
                     help=f"open connections at most; at the cap the longest-idle one is closed (default {d.max_connections})")
    lim.add_argument("--header-timeout", type=t.seconds, default=d.header_timeout,
                     help=f"seconds for a request head or TLS handshake to arrive (default {d.header_timeout:g})")
    lim.add_argument("--body-timeout", type=t.seconds, default=d.body_timeout,
                     help=f"seconds for a request body to arrive after its head (default {d.body_timeout:g})")
    lim.add_argument("--idle-timeout", type=t.seconds, default=d.idle_timeout,
                     help=f"seconds a keep-alive connection may wait for its next request (default {d.idle_timeout:g})")
    lim.add_argument("--max-body-mib", type=t.int_range(1, 4096), default=d.max_body // 2**20,
                     help=f"MiB in one request body (default {d.max_body // 2**20})")
    lim.add_argument("--max-bodies-in-flight-mib", type=t.int_range(1, 65536), default=d.max_bodies_in_flight // 2**20,
                     help=f"MiB of request bodies held at once (default {d.max_bodies_in_flight // 2**20})")
    look = LookupLimits()
    lim.add_argument("--api-lookup-rate", type=t.positive, default=look.rate, metavar="PER_SECOND",
                     help="API-server requests per second callers can cause (a pod the watch has not shown, "
                          f"a refused node's pods); beyond it the watch is trusted (default {look.rate:g})")
    lim.add_argument("--api-lookup-burst", type=t.positive, default=look.burst, metavar="N",
                     help=f"of those, how many at once (default {look.burst:g})")
    lim.add_argument("--node-cache-mib", type=t.int_range(1, 65536), default=64,
                     help="MiB of full Node encodings kept decoded (nodeCacheCapable: false; default 64)")


def run(args: argparse.Namespace) -> int:
    from kubeview.scheduling.extender import Extender
    from kubeview.scheduling.feed import DEFAULT_MAX_STALENESS, ModelFeed
    from kubeview.scheduling.listen_guard import refusal
    from kubeview.scheduling.server import ExtenderServer

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        host, port = parse_listen(args.listen)
        config = PackingConfig(policy=args.policy)
    except ValueError as exc:
        sys.stderr.write(f"kubeview extender: {str(exc).rstrip('.')}.\n")
        return 2
    why = refusal(host, port, token=bool(getattr(args, "token_file", None)),
                  client_ca=bool(getattr(args, "client_ca", None)),
                  insecure=getattr(args, "insecure_allow_unauthenticated", False))
    if why:
        sys.stderr.write(f"kubeview extender: {why}\n")
        return 2
    try:
        token = _read_token(getattr(args, "token_file", None))
        limits, tls = _limits(args)
    except ValueError as exc:
        sys.stderr.write(f"kubeview extender: {exc}.\n")
        return 1
    try:
        source = _open_source(args)
    except SourceError as exc:
        sys.stderr.write(f"kubeview extender: {exc}\n")
        return exc.exit_code
    feed = ModelFeed(max_staleness=DEFAULT_MAX_STALENESS)
    binder = pods_on = pod_of = None
    if isinstance(source, TalksToKube):  # a real cluster: serve the bind verb by posting Bindings
        from kubeview.cluster.kube.bind import KubeBinder
        from kubeview.cluster.kube.pods_on import KubePodOf, KubePodsOnNode

        binder = KubeBinder(source.api_client, source.server)
        pods_on = KubePodsOnNode(source.api_client)  # filter checks a refusal against the API first
        pod_of = KubePodOf(source.api_client)  # prioritize asks for a pod its watch has not shown yet
    try:
        ignores = getattr(args, "scheduler_ignores", None) or ()
        d = LookupLimits()
        lookups = LookupLimits(rate=getattr(args, "api_lookup_rate", d.rate), burst=getattr(args, "api_lookup_burst", d.burst))
        extender = Extender(feed, config, binder=binder, node_cache_bytes=getattr(args, "node_cache_mib", 64) * MiB,
                            pods_on=pods_on, scheduler_ignores=ignores, pod_of=pod_of, lookups=lookups)
        server = ExtenderServer(extender, host, port, token=token, limits=limits, tls=tls)
    except ValueError as exc:  # a TLS file that cannot be used
        source.close()
        sys.stderr.write(f"kubeview extender: {exc}.\n")
        return 1
    except OSError as exc:
        source.close()
        sys.stderr.write(f"kubeview extender: cannot listen on {host}:{port}: {exc.strerror or exc}.\n")
        return 1

    stop = threading.Event()
    failure: list[str] = []

    def watch() -> None:
        try:
            source.run(feed.apply, stop)
        except SourceError as exc:
            failure.append(str(exc))
        except Exception as exc:  # keep the reason, stop the server: the Deployment restarts us
            log.exception("cluster source failed")
            failure.append(f"the cluster source failed: {exc}")
        finally:
            stop.set()

    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    watcher = threading.Thread(target=watch, name="extender-watch", daemon=True)
    watcher.start()
    feed.start()
    server.start()
    log.info("serving the kube-scheduler extender on %s (policy %s, cluster %s%s%s)", server.url, config.policy,
             source.title, ", PUT /config needs a token" if token else "",
             ", client certificates required" if tls is not None and tls.client_ca else "")
    if ignores:
        log.warning("--scheduler-ignores %s: kube-scheduler leaves these to the filter verb, which cannot count the "
                    "pods kube-scheduler assumed but has not bound (a gang's earlier members in its pod-group cycle): "
                    "gangs can be over-committed; use ignoredByScheduler: false (docs/scheduler.md)", ",".join(ignores))
    frozen = False
    try:
        while not stop.wait(0.5):
            if not frozen and feed.view().synced:
                # The listed cluster lives as long as the process: keep it out of the cyclic GC's
                # full collections, which would otherwise stall a scheduling call now and then.
                gc.collect()
                gc.freeze()
                frozen = True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.stop()
        feed.stop()
        source.close()
        watcher.join(timeout=5)
    if failure:
        sys.stderr.write(f"kubeview extender: {failure[0]}\n")
        return 1
    log.info("stopped")
    return 0
