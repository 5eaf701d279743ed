# SPDX-License-Identifier: GPL-2.0
# Binding what a kernel without the patch series lacks, for a Rust module
# built against it: included by this directory's Kbuild, and by the
# selftests' model NIC (which binds net/macsec.h the same way). The
# includer sets compat_src to this directory.

# bindgen parses the kernel's headers with libclang, so a GCC-built
# kernel's C flags go through the filter the kernel's rust/Makefile uses
# (copied from Linux 7.3: a headers package does not ship that Makefile).
ifndef CONFIG_CC_IS_CLANG
compat_bindgen_skip := -mno-fp-ret-in-387 -mpreferred-stack-boundary=% \
	-mskip-rax-setup -mgeneral-regs-only -msign-return-address=% \
	-mindirect-branch=thunk-extern -mindirect-branch-register \
	-mfunction-return=thunk-extern -mrecord-mcount -mabi=lp64 \
	-mindirect-branch-cs-prefix -mstack-protector-guard% -mtraceback=no \
	-mno-pointers-to-nested-functions -mno-string \
	-mno-strict-align -mstrict-align -mdirect-extern-access \
	-mexplicit-relocs -mno-check-zero-division \
	-fconserve-stack -falign-jumps=% -falign-loops=% \
	-femit-struct-debug-baseonly -fno-ipa-cp-clone -fno-ipa-sra \
	-fno-partial-inlining -fplugin-arg-arm_ssp_per_task_plugin-% \
	-fno-reorder-blocks -fno-allow-store-data-races -fasan-shadow-offset=% \
	-fzero-call-used-regs=% -fno-stack-clash-protection \
	-fno-inline-functions-called-once -fsanitize=bounds-strict \
	-fstrict-flex-arrays=% -fmin-function-alignment=% \
	-fzero-init-padding-bits=% -mno-fdpic \
	-fdiagnostics-show-context -fdiagnostics-show-context=% \
	--param=% --param asan-% -fno-isolate-erroneous-paths-dereference \
	-ffixed-r2 -mmultiple -mno-readonly-in-sdata
compat_bindgen_target_x86 := x86_64-linux-gnu
compat_bindgen_target_arm64 := aarch64-linux-gnu
compat_bindgen_cflags = $(filter-out $(compat_bindgen_skip), $(c_flags)) \
	-w --target=$(compat_bindgen_target_$(SRCARCH))
else
compat_bindgen_cflags = $(c_flags)
endif

compat_bindgen_args = --rust-target 1.85 --use-core --with-derive-default \
	--ctypes-prefix ffi --no-layout-tests --no-debug '.*' \
	--enable-function-attribute-detection --no-doc-comments \
	--with-derive-custom-struct '.*=MaybeZeroable' \
	--with-derive-custom-union '.*=MaybeZeroable'
# As for the kernel's bindings: without the LTO flags (their
# -fvisibility=hidden would hide every function from bindgen).
compat_bindgen_cflags_final = $(filter-out $(CC_FLAGS_LTO), $(compat_bindgen_cflags)) \
	-fno-builtin -D__BINDGEN__ -DMODULE

# Types the kernel's bindings define in full that a header of ours
# names only through a pointer (`struct phy_device *` in net/macsec.h): bound here,
# the forward declaration would be an opaque type that hides the kernel's.
compat_bindgen_kernel_types = --blocklist-type phy_device

# What the series' headers declare and the kernel's bindings lack; the
# types it uses, and bindgen's own helper types, are the kernel's
# (compat_bindgen.sh says how).
quiet_cmd_compat_bindgen = BINDGEN $@
      cmd_compat_bindgen = \
	COMPAT_CC='$(CC)' COMPAT_BINDGEN='$(BINDGEN)' \
	bash $(compat_src)/compat_bindgen.sh $@ $< $(compat_src)/compat/kernel_headers.h \
		$(compat_bindgen_args) \
		--blocklist-type __BindgenBitfieldUnit --blocklist-type __IncompleteArrayField \
		--blocklist-type __BindgenUnionField $(compat_bindgen_kernel_types) -- $(c_flags) -- \
		$(compat_bindgen_cflags_final); \
	sed -Ei 's/pub const RUST_CONST_HELPER_([a-zA-Z0-9_]*)/pub const \1/g' $@

# The crate root of a module for such a kernel: the includer's root with
# the lines compat_root_swap names replaced (compat_root.sh), so that the
# module's files stay those of the kernel tree.
quiet_cmd_compat_root = GEN     $@
      cmd_compat_root = $(CONFIG_SHELL) $(compat_src)/compat_root.sh $< $(compat_root_swap) \
	> $@.tmp && mv $@.tmp $@
