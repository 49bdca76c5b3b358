"""The filesystem of a URI, built from the settings users already keep for their stores.

Where each store's settings come from, first found wins:

=========  ==============================================================================
store      settings
=========  ==============================================================================
S3         ``spark.hadoop.fs.s3a.bucket.BUCKET.KEY`` then ``spark.hadoop.fs.s3a.KEY`` of the
           config file's ``spark:`` section or ``--conf`` (``endpoint``,
           ``path.style.access``, ``access.key``, ``secret.key``, ``session.token``,
           ``endpoint.region``, ``connection.ssl.enabled``, ``aws.credentials.provider``
           with ``Anonymous``); then ``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL``,
           ``AWS_REGION``/``AWS_DEFAULT_REGION`` and the AWS SDK's own credential chain
           (environment keys, profiles, web identity, container and instance credentials)
GCS        ``STORAGE_EMULATOR_HOST``; Google's application default credentials
           (``GOOGLE_APPLICATION_CREDENTIALS``, gcloud's file, the instance's account)
Azure      ``spark.hadoop.fs.azure.account.key.ACCOUNT.dfs.core.windows.net``,
           ``AZURE_STORAGE_ACCOUNT_KEY``, else Azure's default credential chain
HDFS       the name node of the URI; ``HADOOP_HOME``/``ARROW_LIBHDFS_DIR`` and
           ``CLASSPATH`` for pyarrow's libhdfs client
=========  ==============================================================================

Before any work starts, :func:`check_store` refuses (exit 2) a scheme with no
filesystem, a store whose client library is missing, and a store with no credentials
anywhere in its chain, naming what to set or install. Credentials are never printed:
:func:`redact` removes them from any text meant for a user or an output.

Example:
    >>> settings = StoreSettings.from_spark({"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000"})
    >>> settings.s3("bucket")["endpoint_override"]
    'http://127.0.0.1:9000'
    >>> redact("key=AKIA123 secret", StoreSettings.from_spark(
    ...     {"spark.hadoop.fs.s3a.access.key": "AKIA123"}))
    'key=*** secret'
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkeval.errors import ConfigError
from sparkeval.storage.uris import is_remote, scheme, split_uri, store_kind

_HADOOP = "spark.hadoop."
#: settings whose values are secrets: never printed, never written
_SECRET_SUFFIXES = ("access.key", "secret.key", "session.token", "account.key", "sas.token")


def is_secret_key(key: str) -> bool:
    """Whether a Spark setting holds a credential (``spark.hadoop.fs.s3a.secret.key``...).

    Example:
        >>> is_secret_key("spark.hadoop.fs.s3a.secret.key")
        True
        >>> is_secret_key("spark.hadoop.fs.s3a.endpoint")
        False
    """
    return key.startswith(_HADOOP) and key.endswith(_SECRET_SUFFIXES)


def _truthy(value: str | None) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class StoreSettings:
    """The ``spark.hadoop.fs.*`` settings of a job (keys without ``spark.hadoop.``) and
    the standard environment variables read when the job started.

    Pickled into Python workers with the files they read, so that a worker opens the
    store exactly as the driver does.
    """

    hadoop: Mapping[str, str] = field(default_factory=dict)
    environment: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_spark(cls, spark_settings: Mapping[str, Any] | None) -> StoreSettings:
        """The store settings among a job's Spark settings, with the environment's."""
        hadoop = {
            str(k)[len(_HADOOP) :]: str(v)
            for k, v in (spark_settings or {}).items()
            if str(k).startswith(_HADOOP + "fs.")
        }
        names = (
            "AWS_ENDPOINT_URL",
            "AWS_ENDPOINT_URL_S3",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "STORAGE_EMULATOR_HOST",
            # the driver's keys go to the workers with the files they read, so that an
            # executor without them in its environment opens the store as the driver does
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
        )
        environment = {n: os.environ[n] for n in names if os.environ.get(n)}
        return cls(hadoop=hadoop, environment=environment)

    def __repr__(self) -> str:
        """The keys only: a repr never shows a credential."""
        return f"StoreSettings(keys={sorted(self.hadoop)}, environment={sorted(self.environment)})"

    def secrets(self) -> list[str]:
        """Every secret value among the settings (and the environment's AWS keys)."""
        values = [v for k, v in self.hadoop.items() if k.endswith(_SECRET_SUFFIXES) and v]
        values += [
            self.environment[n]
            for n in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
            if self.environment.get(n)
        ]
        for variable in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_STORAGE_ACCOUNT_KEY"):
            if os.environ.get(variable):
                values.append(os.environ[variable])
        return values

    def digest(self) -> str:
        """A digest of the settings, to key cached filesystems (never shown)."""
        text = repr(sorted(self.hadoop.items())) + repr(sorted(self.environment.items()))
        return hashlib.sha256(text.encode()).hexdigest()

    def _s3_key(self, bucket: str, key: str) -> str | None:
        return self.hadoop.get(f"fs.s3a.bucket.{bucket}.{key}", self.hadoop.get(f"fs.s3a.{key}"))

    def s3(self, bucket: str) -> dict[str, Any]:
        """Keyword arguments of :class:`pyarrow.fs.S3FileSystem` for ``bucket``."""
        options: dict[str, Any] = {}
        endpoint = (
            self._s3_key(bucket, "endpoint")
            or self.environment.get("AWS_ENDPOINT_URL_S3")
            or self.environment.get("AWS_ENDPOINT_URL")
        )
        if endpoint:
            if "://" not in endpoint:
                ssl = self._s3_key(bucket, "connection.ssl.enabled")
                endpoint = ("http://" if ssl is not None and not _truthy(ssl) else "https://") + (
                    endpoint
                )
            options["endpoint_override"] = endpoint
        region = (
            self._s3_key(bucket, "endpoint.region")
            or self.environment.get("AWS_REGION")
            or self.environment.get("AWS_DEFAULT_REGION")
        )
        if region:
            options["region"] = region
        elif endpoint:
            options["region"] = "us-east-1"  # a custom endpoint: no bucket region to look up
        path_style = self._s3_key(bucket, "path.style.access")
        if path_style is not None:
            options["force_virtual_addressing"] = not _truthy(path_style)
        access, secret = self._s3_key(bucket, "access.key"), self._s3_key(bucket, "secret.key")
        token = self._s3_key(bucket, "session.token")
        if not (access and secret):
            access = self.environment.get("AWS_ACCESS_KEY_ID")
            secret = self.environment.get("AWS_SECRET_ACCESS_KEY")
            token = self.environment.get("AWS_SESSION_TOKEN")
        if access and secret:
            options["access_key"], options["secret_key"] = access, secret
            if token:
                options["session_token"] = token
        provider = self._s3_key(bucket, "aws.credentials.provider") or ""
        if "anonymous" in provider.lower():
            options["anonymous"] = True
        return options

    def azure_key(self, account: str) -> str | None:
        """The account key of an Azure storage account, if one is set."""
        for host in ("dfs.core.windows.net", "blob.core.windows.net"):
            found = self.hadoop.get(f"fs.azure.account.key.{account}.{host}")
            if found:
                return found
        return os.environ.get("AZURE_STORAGE_ACCOUNT_KEY") or None


_current: StoreSettings | None = None
_lock = threading.Lock()
_filesystems: dict[tuple[str, str, str], Any] = {}


def configure(settings: StoreSettings) -> None:
    """Use ``settings`` for every store opened from now on in this process."""
    global _current
    with _lock:
        _current = settings


def current_settings() -> StoreSettings:
    """The settings :func:`configure` last set (the environment's alone before that)."""
    global _current
    if _current is None:
        _current = StoreSettings.from_spark(None)
    return _current


def store_of(path: str) -> StoreSettings | None:
    """The settings a Python worker needs to open ``path``: the current ones for a
    remote path, None for a local one."""
    return current_settings() if is_remote(path) else None


def use_store(settings: StoreSettings | None) -> None:
    """In a Python worker: open stores with the driver's ``settings`` (None: local files)."""
    if settings is not None and settings != _current:
        configure(settings)


def redact(text: str, settings: StoreSettings | None = None) -> str:
    """``text`` with every credential of ``settings`` (default: the current ones) as ``***``."""
    for secret in (settings or current_settings()).secrets():
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace").strip()
    except OSError:
        return ""


def _aws_credentials_available(options: Mapping[str, Any]) -> bool:
    """Whether the AWS credential chain has anything to find, judged without a network
    call (the instance metadata service is only counted on an EC2 machine)."""
    if options.get("anonymous") or options.get("access_key"):
        return True
    env = os.environ
    if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
        return True
    if env.get("AWS_WEB_IDENTITY_TOKEN_FILE") or env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        return True
    if env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        return True
    home = Path(env.get("HOME", "~")).expanduser()
    files = [env.get("AWS_SHARED_CREDENTIALS_FILE"), env.get("AWS_CONFIG_FILE")]
    files += [str(home / ".aws" / "credentials"), str(home / ".aws" / "config")]
    if any(f and Path(f).is_file() for f in files):
        return True
    if _truthy(env.get("AWS_EC2_METADATA_DISABLED")):
        return False
    dmi = "/sys/devices/virtual/dmi/id/"
    return (
        _read(dmi + "board_asset_tag").startswith("i-")
        or "amazon" in _read(dmi + "sys_vendor").lower()
        or _read("/sys/hypervisor/uuid").lower().startswith("ec2")
    )


def _gcs_credentials_available() -> bool:
    env = os.environ
    if env.get("STORAGE_EMULATOR_HOST"):
        return True
    key = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if key and Path(key).is_file():
        return True
    home = Path(env.get("HOME", "~")).expanduser()
    if (home / ".config" / "gcloud" / "application_default_credentials.json").is_file():
        return True
    return "google" in _read("/sys/class/dmi/id/product_name").lower()


def _azure_credentials_available(settings: StoreSettings, account: str) -> bool:
    if settings.azure_key(account):
        return True
    env = os.environ
    if env.get("AZURE_CLIENT_ID") and (
        env.get("AZURE_CLIENT_SECRET") or env.get("AZURE_FEDERATED_TOKEN_FILE")
    ):
        return True
    return "7783-7084-3265-9085-8269-3286-77" in _read("/sys/class/dmi/id/chassis_asset_tag")


def _azure_account(authority: str, uri: str) -> tuple[str, str]:
    """``(container, account)`` of ``container@account.dfs.core.windows.net``."""
    container, at, host = authority.partition("@")
    if not at or not container or not host:
        raise ConfigError(
            f"{uri}: an Azure URI names container@account.dfs.core.windows.net "
            "(abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH)"
        )
    return container, host.split(".", 1)[0]


def _missing_credentials(uri: str, what: str) -> ConfigError:
    return ConfigError(f"{uri}: no credentials for this store; {what}")


def check_store(uri: str, settings: StoreSettings | None = None) -> None:
    """Refuse a URI that sparkeval could not read or write, before any work starts.

    Raises:
        ConfigError: no filesystem for the scheme, no client library, or no credentials.
    """
    filesystem_for(uri, settings)


def filesystem_for(uri: str, settings: StoreSettings | None = None) -> tuple[Any, str]:
    """``(pyarrow filesystem, path within it)`` of a remote URI; filesystems are cached
    per store and settings.

    Raises:
        ConfigError: as :func:`check_store`.
    """
    settings = settings or current_settings()
    kind = store_kind(uri)
    if kind is None:
        raise ValueError(f"{uri} is a local path")
    found, authority, key = split_uri(uri)
    if not authority and kind in ("s3", "gcs", "abfs"):
        raise ConfigError(f"{uri}: the URI names no bucket or container")
    cache_key = (kind, authority, settings.digest())
    with _lock:
        cached = _filesystems.get(cache_key)
    if cached is None:
        cached = _build(kind, found, authority, uri, settings)
        with _lock:
            _filesystems[cache_key] = cached
    filesystem, prefix = cached
    return filesystem, f"{prefix}/{key}".strip("/") if key else prefix


def _build(kind: str, found: str, authority: str, uri: str, settings: StoreSettings):
    """A new filesystem for one store, and the path prefix of its URIs within it."""
    import pyarrow.fs as pafs

    if kind == "s3":
        options = settings.s3(authority)
        if not _aws_credentials_available(options):
            raise _missing_credentials(
                uri,
                "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, an AWS profile, "
                "spark.hadoop.fs.s3a.access.key and .secret.key in the config, or run "
                "where instance credentials exist",
            )
        return pafs.S3FileSystem(**options), authority
    if kind == "gcs":
        if not _gcs_credentials_available():
            raise _missing_credentials(
                uri,
                "set GOOGLE_APPLICATION_CREDENTIALS to a service account key, run "
                "`gcloud auth application-default login`, or run on Google Cloud",
            )
        emulator = settings.environment.get("STORAGE_EMULATOR_HOST")
        if emulator:
            scheme_name, _, host = emulator.rpartition("://")
            return (
                pafs.GcsFileSystem(
                    anonymous=True, endpoint_override=host, scheme=scheme_name or "http"
                ),
                authority,
            )
        return pafs.GcsFileSystem(), authority
    if kind == "abfs":
        container, account = _azure_account(authority, uri)
        if not hasattr(pafs, "AzureFileSystem"):
            raise ConfigError(f"{uri}: this pyarrow has no Azure filesystem; install pyarrow>=16")
        if not _azure_credentials_available(settings, account):
            raise _missing_credentials(
                uri,
                f"set spark.hadoop.fs.azure.account.key.{account}.dfs.core.windows.net "
                "or AZURE_STORAGE_ACCOUNT_KEY, or a workload identity (AZURE_CLIENT_ID ...)",
            )
        key = settings.azure_key(account)
        filesystem = (
            pafs.AzureFileSystem(account_name=account, account_key=key)
            if key
            else pafs.AzureFileSystem(account_name=account)
        )
        return filesystem, container
    if kind == "hdfs":
        return _hdfs(authority, uri), ""
    return _fsspec(found, uri), authority


def _hdfs(authority: str, uri: str):
    import pyarrow.fs as pafs

    library = os.environ.get("ARROW_LIBHDFS_DIR") or (
        os.path.join(os.environ["HADOOP_HOME"], "lib", "native")
        if os.environ.get("HADOOP_HOME")
        else None
    )
    if not library or not Path(library, "libhdfs.so").exists() or not os.environ.get("CLASSPATH"):
        raise ConfigError(
            f"{uri}: sparkeval's own reads and writes on HDFS need the Hadoop client: "
            "set HADOOP_HOME (or ARROW_LIBHDFS_DIR to the directory of libhdfs.so) and "
            "CLASSPATH=$(hadoop classpath --glob), as a Hadoop node has them"
        )
    host, _, port = authority.partition(":")
    try:
        return pafs.HadoopFileSystem(host or "default", int(port or 0))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{uri}: cannot open HDFS: {str(exc).splitlines()[0]}") from None


def _fsspec(found: str, uri: str):
    """A filesystem for a scheme pyarrow lacks, through fsspec when it is installed."""
    try:
        import fsspec
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        implementation = fsspec.get_filesystem_class(found)
    except (ImportError, ValueError):
        raise ConfigError(
            f"{uri}: no filesystem for the scheme {found}://; sparkeval reads and writes "
            "local paths, s3:// (s3a://), gs://, abfss:// and hdfs://, and other schemes "
            "through fsspec with the scheme's package installed"
        ) from None
    return PyFileSystem(FSSpecHandler(implementation()))


def check_paths(paths: list[str], settings: StoreSettings | None = None) -> None:
    """:func:`check_store` for every remote path among ``paths``."""
    for path in paths:
        if is_remote(path) and scheme(path) is not None:
            check_store(path, settings)
