# tensorweave — every set-up step lives here; a fresh clone needs only `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
XSTAMP  := $(VENV)/.installed-xla
PROTOS  := $(wildcard src/tensorweave/proto/*.proto)
NATIVE  := $(wildcard src/tensorweave/runtime/kernels/cpu/native/*.[ch])

.PHONY: install install-xla demo test test-fast bench protos lint clean

install: $(STAMP)

# NOTE: the editable install also compiles the C helper (setup.py) in place; it is rebuilt
# when its sources change.
$(STAMP): pyproject.toml setup.py $(NATIVE)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,examples,tensorboard]'
	touch $(STAMP)

# NOTE: the tests also install the `xla` extra (jax, jaxlib: ~90 MB of wheels, ~30 s into the
# venv, ~1.5 min into a fresh one on a loaded dev machine) so CI exercises the XLA device;
# `make install` and `make demo` stay without it (the XLA tests skip, saying why, without jax).
install-xla: $(XSTAMP)

$(XSTAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,examples,tensorboard,xla]'
	touch $(XSTAMP)

demo: install
	$(BIN)/python examples/cnn_digits.py

test: install-xla
	$(BIN)/python -m pytest

test-fast: install-xla
	$(BIN)/python -m pytest -m "not slow and not multiprocess"

# PEER_PYTHON: a Python with TensorFlow (../shared/peers/setup_tf_peer.sh); used when it exists.
PEER_PYTHON ?= $(wildcard $(HOME)/.cache/tensorweave-tf-peer/bin/python)

bench: install
	PEER_PYTHON="$(PEER_PYTHON)" $(BIN)/python -m benchmarks.run

# NOTE: google/protobuf/*.proto (any.proto) ship inside grpc_tools; gRPC stubs only for
# files that declare a service, so plain message files get no empty *_pb2_grpc.py.
protos: install
	inc="$$($(BIN)/python -c 'import grpc_tools, os; print(os.path.dirname(grpc_tools.__file__))')/_proto"; \
	$(BIN)/python -m grpc_tools.protoc -Isrc -I"$$inc" --python_out=src --pyi_out=src $(PROTOS) && \
	services="$$(grep -l '^service ' $(PROTOS) || true)"; \
	if [ -n "$$services" ]; then \
	  $(BIN)/python -m grpc_tools.protoc -Isrc -I"$$inc" --grpc_python_out=src $$services; \
	fi

# NOTE: mypy runs with a ratchet (tools/mypy_ratchet.py): its error count may only go down.
lint: install
	$(BIN)/ruff check src tests benchmarks examples tools
	$(BIN)/python tools/mypy_ratchet.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
