"""HLSL resource type names to the reflection format's resource kinds (the groups of them that
the steps tell apart are the reflection model's: ``TEXTURE_TYPES``, ``SAMPLER_TYPES``, ...)."""

from __future__ import annotations

from oneshader.reflection.model import ResourceKind, ResourceTypeKind

RTYPES: dict[str, tuple[ResourceTypeKind, ResourceKind]] = {
    "cbuffer": (ResourceTypeKind.ConstantBuffer, ResourceKind.ConstantBuffer),
    "ConstantBuffer": (ResourceTypeKind.ConstantBuffer, ResourceKind.ConstantBuffer),
    "tbuffer": (ResourceTypeKind.TextureBuffer, ResourceKind.ShaderResource),
    "TextureBuffer": (ResourceTypeKind.TextureBuffer, ResourceKind.ShaderResource),
    "SamplerState": (ResourceTypeKind.SamplerState, ResourceKind.Sampler),
    "SamplerComparisonState": (ResourceTypeKind.SamplerComparisonState, ResourceKind.Sampler),
    "sampler": (ResourceTypeKind.SamplerState, ResourceKind.Sampler),  # DXC's SamplerState
    "SubpassInput": (ResourceTypeKind.SubpassInput, ResourceKind.ShaderResource),
    "SubpassInputMS": (ResourceTypeKind.SubpassInputMS, ResourceKind.ShaderResource),
    "RaytracingAccelerationStructure": (
        ResourceTypeKind.RaytracingAccelerationStructure,
        ResourceKind.ShaderResource,
    ),
}
for _t in ResourceTypeKind:
    if _t.name not in RTYPES:
        _kind = ResourceKind.UnorderedAccess
        if _t.name.startswith(("Texture", "Buffer", "StructuredBuffer", "ByteAddressBuffer")):
            _kind = ResourceKind.ShaderResource
        RTYPES[_t.name] = (_t, _kind)

# Rasterizer-ordered views bind as their RW siblings (the same descriptors; the ordering is
# the code's business): the reflection records the RW kind and, in ``hlsl``, the type as written.
for _rov in ("Buffer", "ByteAddressBuffer", "StructuredBuffer", "Texture1D", "Texture1DArray"):
    RTYPES[f"RasterizerOrdered{_rov}"] = RTYPES[f"RW{_rov}"]
for _rov in ("Texture2D", "Texture2DArray", "Texture3D"):
    RTYPES[f"RasterizerOrdered{_rov}"] = RTYPES[f"RW{_rov}"]
