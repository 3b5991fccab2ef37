"""Helpers of the cluster tests: a real Dask scheduler and workers on 127.0.0.1, and the
certificates of a mutual-TLS cluster, made here."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLUGIN = "oneshader-compilers"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Certificates:
    ca: Path
    cert: Path
    key: Path
    verify_ca: Path  # the authority this party checks the other side against

    def client_env(self) -> dict[str, str]:
        """Dask's configuration of a client with this certificate (as a user sets it)."""
        return {
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(self.verify_ca),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(self.cert),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(self.key),
            "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        }

    def cli(self) -> list[str]:
        return [
            "--tls-ca-file",
            str(self.ca),
            "--tls-cert",
            str(self.cert),
            "--tls-key",
            str(self.key),
        ]

    def security(self) -> Any:
        from distributed.security import Security

        return Security(
            tls_ca_file=str(self.ca),
            tls_client_cert=str(self.cert),
            tls_client_key=str(self.key),
            require_encryption=True,
        )


def make_certificates(folder: Path, verify_ca: Path | None = None) -> Certificates:
    """A certificate authority and one certificate it signs for 127.0.0.1 (server and client
    use), with the ``cryptography`` package. ``verify_ca``: the authority the holder checks its
    peers against (default: its own)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name(f"oneshader test CA {folder.name}"))
        .issuer_name(name(f"oneshader test CA {folder.name}"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = Certificates(
        folder / "ca.pem", folder / "cert.pem", folder / "key.pem", verify_ca or folder / "ca.pem"
    )
    paths.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    os.chmod(paths.key, 0o600)
    return paths


class Cluster:
    """A running scheduler and its workers (by name), and a client of the test's own."""

    def __init__(self, address: str, scheduler: subprocess.Popen[bytes], client: Any) -> None:
        self.address = address
        self.scheduler = scheduler
        self.client = client
        self.workers: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def worker_pids(self) -> dict[str, int]:
        return {n: p.pid for n, p in self.workers.items()}

    def names(self) -> dict[str, str]:
        """Worker address -> name."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        return {addr: str(w["name"]) for addr, w in info.items()}

    def compiled(self) -> dict[str, int]:
        """Compiles each worker ran (for this toolchain), by worker name; workers without any
        left out."""

        def count(dask_worker: Any) -> int:
            plugin = dask_worker.plugins.get("oneshader-compilers")
            return int(getattr(plugin, "compiled", 0))

        names = self.names()
        counts = self.client.run(count)
        return {names[a]: n for a, n in counts.items() if n}

    def wait_for_processing(self, timeout: float = 300) -> str:
        """The name of a worker that is compiling a shader right now."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for addr, keys in self.client.processing().items():
                if any(str(k).startswith("oneshader-compile-") for k in keys):
                    return self.names()[addr]
            time.sleep(0.02)
        raise TimeoutError("no compile started on the cluster")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@contextlib.contextmanager
def start_cluster(
    folder: Path,
    *,
    workers: int,
    certs: Certificates | None = None,
    odd_worker_preload: Path | None = None,
) -> Iterator[Cluster]:
    """``dask scheduler`` and ``workers`` ``dask worker`` processes (one thread each, no nanny:
    a killed worker stays dead) on 127.0.0.1, plus one named ``odd`` preloaded with
    ``odd_worker_preload`` when given; all stopped at the end."""
    from distributed import Client

    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    protocol = "tls" if certs else "tcp"
    tls = certs.cli() if certs else []
    logs = []

    def start(args: list[str], log: str) -> subprocess.Popen[bytes]:
        out = open(folder / log, "wb")  # noqa: SIM115 - closed below, after the process
        logs.append(out)
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=folder)

    scheduler = start(
        [
            "dask",
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--protocol",
            protocol,
            "--no-dashboard",
            *tls,
        ],
        "scheduler.log",
    )
    address = f"{protocol}://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = [scheduler]
    client = None
    try:
        cluster_workers: dict[str, subprocess.Popen[bytes]] = {}
        names = [f"w{i + 1}" for i in range(workers)] + (["odd"] if odd_worker_preload else [])
        for name in names:
            preload = ["--preload", str(odd_worker_preload)] if name == "odd" else []
            proc = start(
                [
                    "dask",
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--name",
                    name,
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                    *tls,
                    *preload,
                ],
                f"{name}.log",
            )
            procs.append(proc)
            cluster_workers[name] = proc
        security = certs.security() if certs else None
        deadline = time.monotonic() + 180
        while client is None:
            try:
                client = Client(address, timeout="10s", security=security, set_as_default=False)
            except OSError:
                if scheduler.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        client.wait_for_workers(len(names), timeout=180)
        cluster = Cluster(address, scheduler, client)
        cluster.workers = cluster_workers
        yield cluster
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.close(timeout=10)
        for proc in reversed(procs):
            _stop(proc)
        for log in logs:
            log.close()
