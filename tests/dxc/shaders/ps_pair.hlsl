// The most common DXC pattern: a texture and its sampler on the same register number.
Texture2D albedo : register(t0);
SamplerState albedoSampler : register(s0);

float4 main(float4 position : SV_Position, float2 uv : TEXCOORD0) : SV_Target
{
    return albedo.Sample(albedoSampler, uv);
}
