// Several texture kinds, each paired with a sampler on the same number, plus an unpaired
// texture read with Load.
Texture2DArray layers : register(t0);
SamplerState layersSampler : register(s0);

TextureCube environment : register(t1);
SamplerState environmentSampler : register(s1);

Texture3D<float> volume : register(t2);
SamplerState volumeSampler : register(s2);

Texture2D<float4> noise : register(t3);

float4 main(float4 position : SV_Position, float3 dir : TEXCOORD0, float2 uv : TEXCOORD1) : SV_Target
{
    float4 a = layers.Sample(layersSampler, float3(uv, 1.0));
    float4 b = environment.Sample(environmentSampler, dir);
    float v = volume.Sample(volumeSampler, float3(uv, 0.5));
    float4 n = noise.Load(int3(int2(position.xy) & 15, 0));
    return (a + b) * v + n * 0.01;
}
