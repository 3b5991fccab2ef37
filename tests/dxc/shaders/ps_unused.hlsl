// Declared but unused resources keep their slots. Built once as is and once with
// -D USE_DETAIL=1: the slots must not move when the code stops using detailMap.
Texture2D diffuseMap : register(t0);
SamplerState diffuseSampler : register(s0);

Texture2D detailMap : register(t1);
SamplerState detailSampler : register(s1);

Texture2D neverUsed : register(t4);

cbuffer Unused : register(b2)
{
    float4 notRead;
};

cbuffer Params : register(b3)
{
    float4 detailScale;
};

float4 main(float4 position : SV_Position, float2 uv : TEXCOORD0) : SV_Target
{
    float4 color = diffuseMap.Sample(diffuseSampler, uv);
#if USE_DETAIL
    color *= detailMap.Sample(detailSampler, uv * detailScale.xy);
#endif
    return color * detailScale.w;
}
