# SPDX-License-Identifier: GPL-2.0
#
# macsec_bridge: top-level entry points.  Kbuild (beside this file) is what
# `make -C $KDIR M=$PWD` and DKMS read; this Makefile drives everything else.
#
#   make            build the module against the cached test kernel
#   make check      every test: host unit tests, lint, DKMS, kselftests in
#                   VMs, at the sizes that fit CI (TIER=check)
#   make check-full the same at the tests' full sizes (TIER=full): the bar
#                   for a change to drivers/, patches/ or selftests/
#   VMS=1           with check or check-full: one guest at a time instead
#                   of two side by side (VM_CPUS=N: vCPUs per guest)
#   make check-debug  the same on a KASAN kernel (longer than 3 hours here:
#                   SHARD=1/2 and SHARD=2/2 run half the kselftests each)
#   make check-series the kernel-crate patch series builds at every patch
#   make demo       the whole story, in a VM
#   make bench      the module's cost at 16 to 1,024 ports (beside an older
#                   module: BENCH_BASE) and DRANet-Sec's slice latency, in a VM
#   make torture    10,000 random operations against the module, in a VM
#                   (SEED=N replays a run, OPS=N sets its length)
#   make kernel     build (or find) the cached test kernel
#   make CLIPPY=1   build the module with clippy

SHELL := /bin/bash
TOP := $(CURDIR)
include scripts/toolchain.env
export MODULE_SERIES CACHE_DIR TOOLS_PREFIX RUSTC RUSTDOC RUSTFMT CLIPPY_DRIVER BINDGEN VNG LIBCLANG_PATH

VARIANT ?= debug
export KERNEL_SERIES := $(MODULE_SERIES)
KMAKE = $(MAKE) ARCH=x86_64 RUSTC=$(RUSTC) HOSTRUSTC=$(RUSTC) RUSTDOC=$(RUSTDOC) \
	BINDGEN=$(BINDGEN) RUSTFMT=$(RUSTFMT) CLIPPY_DRIVER=$(CLIPPY_DRIVER)

.PHONY: all setup kernel module check check-full check-debug check-series demo bench eval \
	torture clean

all: module

setup:
	@scripts/setup.sh

kernel: setup
	@scripts/kernel.sh --variant $(VARIANT) >/dev/null

module: kernel
	@kdir=$$(scripts/kernel.sh --variant $(VARIANT) --print) && \
	$(KMAKE) -C $$kdir M=$(TOP) $(if $(CLIPPY),CLIPPY=1) \
		$(if $(filter kasan,$(VARIANT)),LLVM=-19) modules

TIER ?= check
check: setup
	@scripts/check.sh --variant $(VARIANT) --tier $(TIER) $(if $(SHARD),--shard $(SHARD)) \
		$(if $(VMS),--vms $(VMS)) $(if $(VM_CPUS),--cpus $(VM_CPUS))

check-full:
	@$(MAKE) --no-print-directory check TIER=full

check-debug:
	@$(MAKE) --no-print-directory check VARIANT=kasan

check-series: setup
	@scripts/series-bisect.sh --variant $(VARIANT)

demo:
	@scripts/demo.sh --variant $(VARIANT)

bench: kernel
	@scripts/bench.sh --variant $(VARIANT)

eval: kernel
	@ITERS=$(ITERS) REPS=$(REPS) scripts/eval.sh --variant $(VARIANT)

torture: kernel
	@VARIANT=$(VARIANT) SEED=$(SEED) OPS=$(OPS) scripts/torture.sh

clean:
	@kdir=$$(scripts/kernel.sh --variant $(VARIANT) --print 2>/dev/null) && \
	$(KMAKE) -C $$kdir M=$(TOP) clean || true
	@rm -rf target tools/*/target
