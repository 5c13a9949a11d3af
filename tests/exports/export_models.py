#!/usr/bin/env python3
"""Export the real-model test corpus: torchvision, timm and transformers models, graph-only.

    python export_models.py OUT_DIR [--only NAME ...]
        [--exporter ts7|ts9|ts17|ts17fn|dyn18|dyn23|both]
        [--keep-weights]

Needs torch, torchvision, timm, transformers, diffusers and onnxscript (not tso's dependencies: the
corpus is committed, and the tests read the files, never this script). Each model is built
with its library's own code at random initial weights (seed 0), in eval mode, batch 1, and
exported twice where both exporters take it (--exporter both, the default):
  NAME.ts17.graph.onnx   torch.onnx.export(..., opset_version=17, dynamo=False)
  NAME.dyn18.graph.onnx  torch.onnx.export(..., opset_version=18, dynamo=True)
or once by the one named, dyn23 being torch.export at opset 23 (its Attention,
RMSNormalization and RotaryEmbedding operators) and ts17fn the TorchScript exporter writing
each block class that occurs more than once as a model-local function (FunctionProto) that
each block's node calls, and ts7 and ts9 the TorchScript exporter at those old opsets (which
tso upgrades to 11 at import),
then made graph-only as ../shared/models are: every float initializer of 4096 or more
elements keeps its name, type and dims, its data marked EXTERNAL in `NAME.weights`, a file
that is not written. Small initializers stay; the nodes' metadata and doc strings (the
dynamo exporter's stack traces) go. Small configurations of the same classes keep
the files and the tests small where the library takes one (a two-layer BERT, a ViT of
width 64); the image size is the smallest the architecture keeps its structure at.

A failed export is reported and skipped; the exit status is non-zero if any failed.
"""
import argparse
import collections
import os
import sys
import traceback

import onnx
import torch

MIN_EXTERNAL_ELEMENTS = 4096


def image(size, channels=3):
    return (torch.randn(1, channels, size, size),)


def tokens(seq, vocab, with_mask=True, type_ids=False):
    g = torch.Generator().manual_seed(0)
    args = {"input_ids": torch.randint(5, vocab, (1, seq), generator=g)}
    if with_mask:
        args["attention_mask"] = torch.ones(1, seq, dtype=torch.int64)
    if type_ids:
        args["token_type_ids"] = torch.zeros(1, seq, dtype=torch.int64)
    return args


def tv(name, size, **kwargs):
    def build():
        import torchvision

        return torchvision.models.get_model(name, weights=None, **kwargs), image(size)

    return build


def tv_video(name, frames, size):
    def build():
        import torchvision

        model = torchvision.models.get_model(name, weights=None)
        return model, (torch.randn(1, 3, frames, size, size),)

    return build


def tv_flow(name, size):
    def build():
        import torchvision

        model = torchvision.models.get_model(name, weights=None)
        return model, (torch.randn(1, 3, size, size), torch.randn(1, 3, size, size))

    return build


def tv_detection(name, size, **kwargs):
    """A detection model, called with a list of one image as torchvision's are; its
    transform resizes to its own min_size (kwargs may set it)."""

    def build():
        import torchvision

        m = torchvision.models.get_model(name, weights=None, weights_backbone=None, **kwargs)
        return m, ([torch.randn(3, size, size)],)

    return build


def diffusers_unet():
    """diffusers' UNet2DConditionModel in a small configuration (two stages of 32 and 64
    channels, one cross-attention stage, a text context of 7 tokens of width 32): a latent,
    a timestep and the context in, the predicted noise out."""
    import diffusers

    m = diffusers.UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(32, 64), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
        attention_head_dim=8, norm_num_groups=8)
    args = {"sample": torch.randn(1, 4, 16, 16), "timestep": torch.tensor([10]),
            "encoder_hidden_states": torch.randn(1, 7, 32)}
    return ByName(m, list(args)), args


def tv_vit():
    from torchvision.models.vision_transformer import VisionTransformer

    m = VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=2, hidden_dim=64,
                          mlp_dim=128)
    torch.nn.init.normal_(m.heads.head.weight, std=0.1)  # zeros at initialization
    return m, image(64)


def timm_model(name, size, **kwargs):
    def build():
        import timm

        return timm.create_model(name, pretrained=False, **kwargs), image(size)

    return build


class ByName(torch.nn.Module):
    """A model called with its inputs by name, returning one of its outputs (by
    index or key; the first by default)."""

    def __init__(self, model, names, output=0):
        super().__init__()
        self.model, self.names, self.output = model, names, output

    def forward(self, *inputs):
        return self.model(**dict(zip(self.names, inputs)))[self.output]


def tv_segmentation(name, size, arg="x"):
    def build():
        import torchvision

        m = torchvision.models.get_model(name, weights=None, weights_backbone=None)
        return ByName(m, [arg], output="out"), {arg: image(size)[0]}

    return build


def hf_text(config_cls, model_cls, seq=16, type_ids=False, output_index=0, **config):
    def build():
        import transformers

        cfg = getattr(transformers, config_cls)(**config)
        args = tokens(seq, cfg.vocab_size, type_ids=type_ids)
        return ByName(getattr(transformers, model_cls)(cfg), list(args), output_index), args

    return build


class DecodeStep(torch.nn.Module):
    """One generation step of a causal LM: a token, the mask over the cache and
    it, and each layer's cached keys and values in; logits and the updated
    keys and values out."""

    def __init__(self, model, config):
        super().__init__()
        self.model, self.config = model, config

    def forward(self, ids, mask, *cache):
        from transformers import DynamicCache

        past = DynamicCache(config=self.config)
        for layer in range(len(cache) // 2):
            past.update(cache[2 * layer], cache[2 * layer + 1], layer)
        out = self.model(input_ids=ids, attention_mask=mask, past_key_values=past, use_cache=True)
        return (out.logits, *[t for layer in out.past_key_values.layers
                              for t in (layer.keys, layer.values)])


def hf_decode_step(config_cls, model_cls, past=7, **config):
    def build():
        import transformers

        cfg = getattr(transformers, config_cls)(**config)
        kv_heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        args = {"ids": torch.randint(5, cfg.vocab_size, (1, 1)),
                "mask": torch.ones(1, past + 1, dtype=torch.int64)}
        for layer in range(cfg.num_hidden_layers):
            for kind in ("key", "value"):
                args[f"past_{kind}_{layer}"] = torch.randn(1, kv_heads, past, head_dim)
        return DecodeStep(getattr(transformers, model_cls)(cfg), cfg), args

    return build


def hf_audio(config_cls, model_cls, input_name, shape, encoder=False, **config):
    def build():
        import transformers

        m = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**config))
        if encoder:
            m = m.get_encoder()
        return ByName(m, [input_name]), {input_name: torch.randn(*shape)}

    return build


def hf_vision(config_cls, model_cls, size, **config):
    def build():
        import transformers

        cfg = getattr(transformers, config_cls)(**config)
        m = ByName(getattr(transformers, model_cls)(cfg), ["pixel_values"])
        return m, {"pixel_values": torch.randn(1, 3, size, size)}

    return build


SMALL_TEXT = dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=128, max_position_embeddings=64)

SMALL_DECODER = dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64, use_cache=False)

MODELS = {
    # torchvision classification models
    "tv_mobilenet_v2": tv("mobilenet_v2", 64),
    "tv_mobilenet_v3_small": tv("mobilenet_v3_small", 64),
    "tv_efficientnet_b0": tv("efficientnet_b0", 64),
    "tv_regnet_y_400mf": tv("regnet_y_400mf", 64),
    "tv_shufflenet_v2_x0_5": tv("shufflenet_v2_x0_5", 64),
    "tv_densenet121": tv("densenet121", 64),
    "tv_googlenet": tv("googlenet", 64, init_weights=True, aux_logits=False),
    "tv_mnasnet0_5": tv("mnasnet0_5", 64),
    "tv_alexnet": tv("alexnet", 224),
    "tv_convnext_tiny": tv("convnext_tiny", 64),
    "tv_swin_t": tv("swin_t", 112),
    "tv_swin_v2_t": tv("swin_v2_t", 128),
    "tv_maxvit_t": tv("maxvit_t", 224),
    "tv_vit_small_config": tv_vit,
    # torchvision video classification (3-D convolutions and pooling)
    "tv_r3d_18": tv_video("r3d_18", 8, 64),
    "tv_mc3_18": tv_video("mc3_18", 8, 64),
    "tv_r2plus1d_18": tv_video("r2plus1d_18", 8, 64),
    "tv_s3d": tv_video("s3d", 16, 224),
    # torchvision optical flow (GridSample lookups in a correlation pyramid; the
    # flow after each of its 12 refinements an output)
    "tv_raft_small": tv_flow("raft_small", 128),
    # diffusers' UNet: a timestep embedded in sinusoids, GroupNorm, self- and
    # cross-attention, nearest upsampling
    "df_unet2d_condition": diffusers_unet,
    # torchvision's detection models: their post-processing (NonZero, TopK,
    # NonMaxSuppression, RoiAlign of the proposals, If) has shapes known only
    # when they run; the ResNet-50 ones at 256 pixels rather than 800
    "tv_ssdlite320_mobilenet_v3_large": tv_detection("ssdlite320_mobilenet_v3_large", 320),
    "tv_ssd300_vgg16": tv_detection("ssd300_vgg16", 300),
    "tv_fasterrcnn_mobilenet_v3_large_320_fpn":
        tv_detection("fasterrcnn_mobilenet_v3_large_320_fpn", 320),
    "tv_retinanet_resnet50_fpn": tv_detection("retinanet_resnet50_fpn", 256, min_size=256,
                                              max_size=256),
    "tv_fcos_resnet50_fpn": tv_detection("fcos_resnet50_fpn", 256, min_size=256, max_size=256),
    "tv_maskrcnn_resnet50_fpn": tv_detection("maskrcnn_resnet50_fpn", 256, min_size=256,
                                             max_size=256),
    "tv_keypointrcnn_resnet50_fpn": tv_detection("keypointrcnn_resnet50_fpn", 256, min_size=256,
                                                 max_size=256),
    # torchvision segmentation models (their "out")
    "tv_deeplabv3_mobilenet_v3_large": tv_segmentation("deeplabv3_mobilenet_v3_large", 64),
    "tv_lraspp_mobilenet_v3_large": tv_segmentation("lraspp_mobilenet_v3_large", 64,
                                                           arg="input"),
    "tv_fcn_resnet50": tv_segmentation("fcn_resnet50", 64),
    # timm
    "timm_vit_tiny": timm_model("vit_tiny_patch16_224", 64, img_size=64, depth=2),
    "timm_deit_tiny_distilled": timm_model("deit_tiny_distilled_patch16_224", 64, img_size=64,
                                           depth=2),
    "timm_convnext_atto": timm_model("convnext_atto", 64),
    "timm_efficientnet_b0": timm_model("efficientnet_b0", 64),
    "timm_mobilenetv3_large": timm_model("mobilenetv3_large_100", 64),
    "timm_cspdarknet53": timm_model("cspdarknet53", 64),
    "timm_darknet53": timm_model("darknet53", 64),
    "timm_levit_128s": timm_model("levit_128s", 224),
    "timm_poolformer_s12": timm_model("poolformer_s12", 64),
    "timm_mixer_s16": timm_model("mixer_s16_224", 64, img_size=64),
    "timm_resmlp_12": timm_model("resmlp_12_224", 64, img_size=64),
    "timm_coatnet_0": timm_model("coatnet_0_rw_224", 224),
    "timm_efficientformer_l1": timm_model("efficientformer_l1", 224),
    "timm_beit_base": timm_model("beit_base_patch16_224", 64, img_size=64, depth=2),
    "timm_xcit_nano": timm_model("xcit_nano_12_p16_224", 64, img_size=64, depth=2),
    "timm_eva02_tiny": timm_model("eva02_tiny_patch14_224", 56, img_size=56, depth=2),
    "timm_nfnet_f0": timm_model("dm_nfnet_f0", 64),
    "timm_bit_resnetv2_50x1": timm_model("resnetv2_50x1_bit", 64),
    "timm_ghostnet": timm_model("ghostnet_100", 64),
    "timm_repvgg_a0": timm_model("repvgg_a0", 64),
    "timm_hrnet_w18_small": timm_model("hrnet_w18_small", 64),
    "timm_res2net50": timm_model("res2net50_26w_4s", 64),
    "timm_sknet_resnet18": timm_model("skresnet18", 64),
    "timm_dla34": timm_model("dla34", 64),
    "timm_pit_ti": timm_model("pit_ti_224", 224),
    "timm_cait_xxs24": timm_model("cait_xxs24_224", 64, img_size=64, depth=2),
    "timm_convmixer_768_32": timm_model("convmixer_768_32", 64),
    "timm_edgenext_xx_small": timm_model("edgenext_xx_small", 64),
    "timm_mobilevit_xxs": timm_model("mobilevit_xxs", 64),
    "timm_focalnet_tiny": timm_model("focalnet_tiny_srf", 64),
    "timm_fastvit_t8": timm_model("fastvit_t8", 64),
    "timm_regnetz_b16": timm_model("regnetz_b16", 64),
    "timm_botnet26t": timm_model("botnet26t_256", 256),
    "timm_gcvit_xxtiny": timm_model("gcvit_xxtiny", 224),
    "timm_twins_svt_small": timm_model("twins_svt_small", 64),
    "timm_swin_tiny": timm_model("swin_tiny_patch4_window7_224", 224),
    "timm_volo_d1": timm_model("volo_d1_224", 224),
    "timm_tnt_s": timm_model("tnt_s_patch16_224", 224),
    "timm_convnextv2_atto": timm_model("convnextv2_atto", 64),
    "timm_mobilevitv2_050": timm_model("mobilevitv2_050", 64),
    "timm_efficientnetv2_b0": timm_model("tf_efficientnetv2_b0", 64),
    "timm_repvit_m0_9": timm_model("repvit_m0_9", 64),
    "timm_inception_v4": timm_model("inception_v4", 299),
    "timm_mambaout_femto": timm_model("mambaout_femto", 64),
    "timm_hiera_tiny": timm_model("hiera_tiny_224", 224),
    "timm_tiny_vit_5m": timm_model("tiny_vit_5m_224", 224),
    "timm_efficientvit_m0": timm_model("efficientvit_m0", 224),
    "timm_mobilenetv4_conv_small": timm_model("mobilenetv4_conv_small", 64),
    "timm_mobilenetv4_hybrid_medium": timm_model("mobilenetv4_hybrid_medium", 224),
    "timm_efficientformerv2_s0": timm_model("efficientformerv2_s0", 224),
    "timm_caformer_s18": timm_model("caformer_s18", 64),
    "timm_ghostnetv2_100": timm_model("ghostnetv2_100", 64),
    "timm_inception_next_tiny": timm_model("inception_next_tiny", 64),
    "timm_starnet_s1": timm_model("starnet_s1", 64),
    "timm_vit_registers": timm_model("vit_small_patch14_reg4_dinov2", 56, img_size=56, depth=2),
    "timm_rdnet_tiny": timm_model("rdnet_tiny", 64),
    "timm_efficientvit_b0": timm_model("efficientvit_b0", 64),
    # transformers encoders
    "hf_bert": hf_text("BertConfig", "BertModel", type_ids=True, **SMALL_TEXT),
    "hf_distilbert": hf_text("DistilBertConfig", "DistilBertModel", vocab_size=1000, dim=64,
                             n_layers=2, n_heads=2, hidden_dim=128, max_position_embeddings=64),
    "hf_roberta": hf_text("RobertaConfig", "RobertaModel", **SMALL_TEXT),
    "hf_albert": hf_text("AlbertConfig", "AlbertModel", embedding_size=32, **SMALL_TEXT),
    "hf_electra": hf_text("ElectraConfig", "ElectraModel", embedding_size=32, **SMALL_TEXT),
    "hf_deberta_v2": hf_text("DebertaV2Config", "DebertaV2Model", **SMALL_TEXT),
    "hf_mpnet": hf_text("MPNetConfig", "MPNetModel", **SMALL_TEXT),
    "hf_xlm_roberta": hf_text("XLMRobertaConfig", "XLMRobertaModel", **SMALL_TEXT),
    "hf_modernbert": hf_text("ModernBertConfig", "ModernBertModel", vocab_size=1000,
                             hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=128, max_position_embeddings=64,
                             global_attn_every_n_layers=2, local_attention=16, pad_token_id=0,
                             bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2),
    "hf_mobilebert": hf_text("MobileBertConfig", "MobileBertModel", vocab_size=1000,
                             num_hidden_layers=2, max_position_embeddings=64),
    "hf_squeezebert": hf_text("SqueezeBertConfig", "SqueezeBertModel", vocab_size=1000,
                              hidden_size=64, embedding_size=64, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=128,
                              max_position_embeddings=64),
    "hf_bert_relative_key": hf_text("BertConfig", "BertModel",
                                    position_embedding_type="relative_key", **SMALL_TEXT),
    "hf_vit": hf_vision("ViTConfig", "ViTModel", 64, image_size=64, hidden_size=64,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
    "hf_swin": hf_vision("SwinConfig", "SwinModel", 64, image_size=64, embed_dim=32,
                         depths=[2, 2], num_heads=[2, 4], window_size=4),
    "hf_convnext": hf_vision("ConvNextConfig", "ConvNextModel", 64, hidden_sizes=[16, 32, 64, 128],
                             depths=[1, 1, 2, 1]),
    "hf_dinov2": hf_vision("Dinov2Config", "Dinov2Model", 56, image_size=56, patch_size=14,
                           hidden_size=64, num_hidden_layers=2, num_attention_heads=2),
    "hf_dinov2_518_at_224": hf_vision("Dinov2Config", "Dinov2Model", 224, image_size=518,
                                      patch_size=14, hidden_size=64, num_hidden_layers=2,
                                      num_attention_heads=2),
    "hf_clip_vision": hf_vision("CLIPVisionConfig", "CLIPVisionModel", 64, image_size=64,
                                patch_size=16, hidden_size=64, num_hidden_layers=2,
                                num_attention_heads=2, intermediate_size=128),
    "hf_clip_text_pooled": hf_text("CLIPTextConfig", "CLIPTextModel", output_index=1,
                                   vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=128,
                                   max_position_embeddings=64, eos_token_id=999),
    "hf_segformer": hf_vision("SegformerConfig", "SegformerForSemanticSegmentation", 64,
                              depths=[1, 1, 1, 1], hidden_sizes=[16, 32, 64, 128],
                              num_attention_heads=[1, 2, 2, 4], decoder_hidden_size=64),
    # Speech encoders
    "hf_wav2vec2": hf_audio("Wav2Vec2Config", "Wav2Vec2Model", "input_values", (1, 4000),
                            hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=128, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2),
                            conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                            num_conv_pos_embedding_groups=4),
    "hf_whisper_encoder": hf_audio("WhisperConfig", "WhisperModel", "input_features", (1, 16, 64),
                                   encoder=True, d_model=64, encoder_layers=2,
                                   encoder_attention_heads=2, encoder_ffn_dim=128,
                                   decoder_layers=1, decoder_attention_heads=2,
                                   decoder_ffn_dim=128, num_mel_bins=16, max_source_positions=32,
                                   vocab_size=1000, pad_token_id=0, bos_token_id=1,
                                   eos_token_id=2, decoder_start_token_id=1),
    # Decoders (the prompt pass, no cache): learned, rotary and ALiBi
    # positions, grouped-query heads, sliding windows, RMS norms, gated MLPs.
    "hf_gpt2": hf_text("GPT2Config", "GPT2Model", vocab_size=1000, n_embd=64, n_layer=2,
                       n_head=2, n_positions=64, use_cache=False),
    "hf_llama": hf_text("LlamaConfig", "LlamaModel", num_key_value_heads=2, **SMALL_DECODER),
    "hf_qwen2": hf_text("Qwen2Config", "Qwen2Model", num_key_value_heads=2, **SMALL_DECODER),
    "hf_mistral": hf_text("MistralConfig", "MistralModel", num_key_value_heads=2,
                          sliding_window=8, **SMALL_DECODER),
    "hf_phi3": hf_text("Phi3Config", "Phi3Model", num_key_value_heads=2, pad_token_id=0,
                       **SMALL_DECODER),
    "hf_gemma": hf_text("GemmaConfig", "GemmaModel", num_key_value_heads=1, head_dim=16,
                        **SMALL_DECODER),
    "hf_gpt_neox": hf_text("GPTNeoXConfig", "GPTNeoXModel", rotary_pct=0.25, **SMALL_DECODER),
    # One generation step with a cache of 7 tokens (optimum's decoder with past)
    "hf_llama_decode": hf_decode_step("LlamaConfig", "LlamaForCausalLM", num_key_value_heads=2,
                                      **{**SMALL_DECODER, "use_cache": True}),
    "hf_qwen2_decode": hf_decode_step("Qwen2Config", "Qwen2ForCausalLM", num_key_value_heads=2,
                                      **{**SMALL_DECODER, "use_cache": True}),
    "hf_opt": hf_text("OPTConfig", "OPTModel", vocab_size=1000, hidden_size=64,
                      num_hidden_layers=2, num_attention_heads=2, ffn_dim=128,
                      word_embed_proj_dim=64, max_position_embeddings=64, use_cache=False),
    "hf_bloom": hf_text("BloomConfig", "BloomModel", vocab_size=1000, hidden_size=64, n_layer=2,
                        n_head=4, use_cache=False),
    "hf_falcon": hf_text("FalconConfig", "FalconModel", vocab_size=1000, hidden_size=64,
                         num_hidden_layers=2, num_attention_heads=4, use_cache=False),
    "hf_t5_encoder": hf_text("T5Config", "T5EncoderModel", vocab_size=1000, d_model=64, d_ff=128,
                             num_layers=2, num_heads=2, d_kv=32),
}


def graph_only(model, weights_file):
    for n in model.graph.node:  # torch.export's stack traces and module names
        del n.metadata_props[:]
        n.doc_string = ""
    for t in model.graph.initializer:
        n = 1
        for d in t.dims:
            n *= d
        if t.data_type != onnx.TensorProto.FLOAT or n < MIN_EXTERNAL_ELEMENTS:
            continue
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        del t.external_data[:]
        for key, value in (("location", weights_file), ("offset", "0"), ("length", str(n * 4))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
    return model


# Exporter tags: the exporter (ts: TorchScript, dyn: torch.export), the opset, and
# whether the model's blocks are written as model-local functions that each use calls
# (export_modules_as_functions, TorchScript only).
EXPORTERS = {"ts7": (False, 7, False), "ts9": (False, 9, False), "ts17": (False, 17, False),
             "ts17fn": (False, 17, True), "dyn18": (True, 18, False), "dyn23": (True, 23, False)}


def repeated_blocks(model):
    """The classes of the modules that hold others and occur more than once: the
    blocks and stages a user writes as functions (torch's exporter fails on
    export_modules_as_functions=True, every module, for most models)."""
    counts = collections.Counter(type(m) for m in model.modules() if next(m.children(), None))
    return {t for t, n in counts.items() if n > 1}


def export(name, build, out_dir, tag, keep_weights):
    torch.manual_seed(0)
    model, args = build()
    model.eval()
    dynamo, opset, functions = EXPORTERS[tag]
    path = os.path.join(out_dir, f"{name}.{tag}.graph.onnx")
    tmp = os.path.join(out_dir, f"{name}.{tag}.tmp.onnx")
    kwargs = dict(opset_version=opset, dynamo=dynamo)
    if functions:
        kwargs["export_modules_as_functions"] = repeated_blocks(model)
    # Named inputs are passed in the order of the model's forward, which
    # starts with them (input_ids, attention_mask, token_type_ids).
    if isinstance(args, dict):
        kwargs["input_names"] = list(args)
        args = tuple(args.values())
    else:
        kwargs["input_names"] = ["input"]
    # Not under no_grad: torch's fused attention fast path, which the
    # TorchScript exporter cannot write, runs only without autograd.
    torch.onnx.export(model, args, tmp, **kwargs)
    m = onnx.load(tmp, load_external_data=True)
    for f in os.listdir(out_dir):
        if f.startswith(f"{name}.{tag}.tmp"):
            os.remove(os.path.join(out_dir, f))
    if keep_weights:
        onnx.save(m, path.replace(".graph.onnx", ".onnx"))
    onnx.save(graph_only(m, f"{name}.{tag}.weights"), path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", help="model names (default: all)")
    ap.add_argument("--exporter", choices=[*EXPORTERS, "both"], default="both",
                    help="both: ts17 and dyn18")
    ap.add_argument("--keep-weights", action="store_true",
                    help="also write NAME.TAG.onnx with the random weights")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    failed = []
    for name in a.only or MODELS:
        for tag in ["ts17", "dyn18"] if a.exporter == "both" else [a.exporter]:
            try:
                path = export(name, MODELS[name], a.out_dir, tag, a.keep_weights)
                print(f"{path}: {os.path.getsize(path)} bytes", flush=True)
            except Exception as e:  # report every failure, export the rest
                failed.append(f"{name} ({tag})")
                print(f"{name}: export failed: {type(e).__name__}: {str(e)[:300]}",
                      file=sys.stderr, flush=True)
                traceback.print_exc(limit=1)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
