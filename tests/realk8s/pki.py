"""The real plane's certificates, made with `openssl` (the `cryptography` package is not in the lock).

One CA signs the API server's serving certificate and a client certificate per component, as kubeadm
does: the admin (`O=system:masters`), kube-controller-manager and kube-scheduler each authenticate
as the identity bootstrap RBAC grants their roles to, so RBAC is exercised the way a kubeadm cluster
does it. A second CA signs the front proxy's client certificate (kubeadm's front-proxy-ca): what the API
server's aggregator presents to an aggregated API server (Kueue's visibility API), which trusts it through
the `extension-apiserver-authentication` ConfigMap. EC P-256 keys: a few milliseconds each where RSA-2048 takes ~100 ms, and the plane is
started on every test session.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

DAYS = "2"  # the plane lives for one test session


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _key(path: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path), cwd=path.parent)


@dataclass(frozen=True)
class Pair:
    """A certificate and its key, as paths."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class PKI:
    """Every file the plane's processes are given."""

    ca: Pair
    serving: Pair
    sa_key: Path  # signs ServiceAccount tokens (kube-apiserver and kube-controller-manager)
    sa_pub: Path
    clients: dict[str, Pair]  # "admin", "controller-manager", "scheduler"
    front_proxy_ca: Pair  # --requestheader-client-ca-file
    front_proxy: Pair  # --proxy-client-cert-file/--proxy-client-key-file, CN front-proxy-client


CLIENTS = {
    "admin": "/CN=kubernetes-admin/O=system:masters",
    "controller-manager": "/CN=system:kube-controller-manager",
    "scheduler": "/CN=system:kube-scheduler",
}


def _signed(d: Path, name: str, subject: str, ca: Pair, ext: str) -> Pair:
    key, csr, crt, extfile = d / f"{name}.key", d / f"{name}.csr", d / f"{name}.crt", d / f"{name}.ext"
    _key(key)
    _openssl("req", "-new", "-key", str(key), "-subj", subject, "-out", str(csr), cwd=d)
    extfile.write_text(ext)
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca.cert), "-CAkey", str(ca.key), "-CAcreateserial",
             "-days", DAYS, "-out", str(crt), "-extfile", str(extfile), cwd=d)
    return Pair(crt, key)


FRONT_PROXY_CLIENT = "front-proxy-client"  # --requestheader-allowed-names


def _ca(d: Path, name: str, subject: str) -> Pair:
    ca = Pair(d / f"{name}.crt", d / f"{name}.key")
    _key(ca.key)
    _openssl("req", "-x509", "-new", "-key", str(ca.key), "-subj", subject, "-days", DAYS,
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-out", str(ca.cert), cwd=d)
    return ca


def make_pki(d: Path) -> PKI:
    """Write a CA, the serving pair (127.0.0.1, localhost, the kubernetes Service), the clients' pairs,
    the ServiceAccount signing key and the front proxy's CA and client pair under `d`."""
    d.mkdir(parents=True, exist_ok=True)
    ca = _ca(d, "ca", "/CN=kubeview-realk8s-ca")
    serving = _signed(d, "apiserver", "/CN=kube-apiserver", ca,
                      "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,"
                      "DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n")
    clients = {name: _signed(d, name, subject, ca, "extendedKeyUsage=clientAuth\n") for name, subject in CLIENTS.items()}
    sa_key, sa_pub = d / "sa.key", d / "sa.pub"
    _key(sa_key)
    _openssl("pkey", "-in", str(sa_key), "-pubout", "-out", str(sa_pub), cwd=d)
    front_ca = _ca(d, "front-proxy-ca", "/CN=kubeview-realk8s-front-proxy-ca")
    front = _signed(d, FRONT_PROXY_CLIENT, f"/CN={FRONT_PROXY_CLIENT}", front_ca, "extendedKeyUsage=clientAuth\n")
    return PKI(ca, serving, sa_key, sa_pub, clients, front_ca, front)
