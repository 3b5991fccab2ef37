// HLSL's own names for the draw parameters (SM 6.8): SV_StartInstanceLocation and
// SV_StartVertexLocation are system values, never vertex attributes.
cbuffer Camera : register(b0)
{
    float4x4 viewProj;
};

StructuredBuffer<float4> instanceOffsets : register(t1);

struct VSOutput
{
    float4 position : SV_Position;
    float4 color : COLOR0;
};

VSOutput main(float3 position : POSITION,
              uint instance : SV_InstanceID,
              uint baseInstance : SV_StartInstanceLocation,
              int baseVertex : SV_StartVertexLocation)
{
    VSOutput o;
    float4 offset = instanceOffsets[instance + baseInstance];
    o.position = mul(viewProj, float4(position + offset.xyz, 1.0));
    o.color = float4(offset.www, float(baseVertex & 1));
    return o;
}
