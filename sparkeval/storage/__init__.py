"""The storage layer: every file sparkeval itself reads or writes, addressed by path or URI.

A local path (or ``file://``) is read and written with the operating system's own
calls, exactly as before; any other URI goes through one filesystem abstraction,
:mod:`pyarrow.fs`. pyarrow's filesystems were chosen over fsspec because pyarrow is
already a dependency of every sparkeval process (driver and Python workers), its
S3, GCS, HDFS and Azure filesystems are written in C++ with ranged, parallel reads
that the Parquet reader uses directly, and its filesystem objects pickle, so a Python
worker opens the same store as the driver. A scheme pyarrow lacks is still reachable
when fsspec and the scheme's fsspec package are installed (wrapped by pyarrow's
``FSSpecHandler``).

* :mod:`sparkeval.storage.uris`: which paths are URIs and what they name;
* :mod:`sparkeval.storage.stores`: the filesystem of a URI, its settings (the
  ``spark.hadoop.fs.*`` keys, the standard environment variables, instance
  credentials) and the refusal of a scheme with no filesystem;
* :mod:`sparkeval.storage.files`: open, list, size, read and write, local or remote;
* :mod:`sparkeval.storage.object_commit`: outputs and their writer lock on object
  stores, which have no rename;
* :mod:`sparkeval.storage.local_copies`: remote inputs copied for a JVM that has no
  filesystem for their scheme.
"""
