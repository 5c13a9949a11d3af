#!/bin/sh
# Runs one libFuzzer target of the sanitizer build: first every input that
# once crashed it (tests/fuzz/regressions/TARGET/), then fuzzing from seeds
# made of the project's committed files.
#   run.sh BINARY SOURCE_DIR WORK_DIR [libFuzzer flags, e.g. -max_total_time=60 or -runs=1000000]
# A crash leaves its input in WORK_DIR (crash-*); copy it into
# tests/fuzz/regressions/TARGET/ with the fix, so it is replayed first ever after.
set -eu
bin=$1 src=$2 work=$3
shift 3
name=$(basename "$bin")
rm -rf "$work/seeds"
mkdir -p "$work/seeds" "$work/corpus"
seeds=$work/seeds

# Each rule of a committed rule file becomes a seed of its own (whole files
# are megabytes), under the file's version line.
split_rules() {
  awk -v out="$seeds" -v tag="$(basename "$1" .rules)" -v max="$2" '
    NR == 1 { head = $0; next }
    /^rule / { n++; if (n > max) exit; f = sprintf("%s/%s_%03d.rules", out, tag, n); print head > f }
    n && n <= max { print > f }
    /^}/ && n { close(f) }' "$1"
}

case $name in
  onnx_import_fuzz)
    for m in "$src"/../shared/models/squeezenet1_1.graph.onnx \
             "$src"/tests/exports/hf_bert.dyn23.graph.onnx \
             "$src"/tests/exports/timm_vit_tiny.ts17fn.graph.onnx \
             /usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_slice/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_reshape_reduced_dims/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_reduce_l2_keepdims_example/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_scatternd/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_layer_normalization_4d_axis1_expanded/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_einsum_batch_matmul/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_resize_downsample_scales_cubic/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_resize_upsample_scales_nearest/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_tile/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_gathernd_example_float32/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_averagepool_1d_default/model.onnx \
             /usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d_groups/model.onnx \
             /usr/share/libonnx-testdata/data/pytorch-operator/test_operator_chunk/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_hardsigmoid/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_reflect_pad/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_lrn/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_maxpool_3d_default/model.onnx \
             /usr/share/libonnx-testdata/data/pytorch-converted/test_Conv3d_groups/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_depthtospace_crd_mode/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_logsoftmax_axis_1/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_max_example/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_reduce_log_sum_asc_axes/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_gridsample_reflection_padding/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_if/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_loop11/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_nonzero_example/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_top_k/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_nonmaxsuppression_two_classes/model.onnx \
             "$src"/tests/exports/detection/tv_fasterrcnn_mobilenet_v3_large_320_fpn.ts17.graph.onnx \
             "$src"/tests/exports/tv_r3d_18.ts17.graph.onnx; do
      [ -f "$m" ] && cp "$m" "$seeds/$(echo "$m" | md5sum | cut -c1-12).onnx"
    done ;;
  graph_text_fuzz)
    cp "$src"/tests/data/*.tso "$seeds"/
    awk -v out="$seeds" '/^```tso/ { n++; f = sprintf("%s/readme_%02d.tso", out, n); on = 1; next }
                         /^```/ { on = 0; close(f); next } on { print > f }' "$src"/core/README.md ;;
  rules_fuzz)
    for f in "$src"/substitutions/*.rules; do split_rules "$f" 40; done ;;
  op_set_fuzz)
    cp "$src"/generator/*.ops "$seeds"/ ;;
  cost_table_fuzz)
    cp "$src"/tests/fuzz/seeds/cost_table.json "$seeds"/ ;;
  device_fuzz)
    cp "$src"/optimizer/devices/*.json "$seeds"/ ;;
  *)
    echo "run.sh: no seeds for $name" >&2
    exit 2 ;;
esac

regressions=$src/tests/fuzz/regressions/$name
if [ -d "$regressions" ] && [ -n "$(ls "$regressions")" ]; then
  echo "replaying $(ls "$regressions" | wc -l) regression inputs of $name"
  "$bin" -rss_limit_mb=2048 -timeout=20 "$regressions"/*
fi
echo "fuzzing $name from $(ls "$seeds" | wc -l) seeds"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "$bin" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix="$work/" \
  "$@" "$work/corpus" "$seeds"
