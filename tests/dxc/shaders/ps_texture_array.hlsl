// An array of textures on one register: DXC gives the whole array one binding (t2 -> binding 2,
// four descriptors); the sampler on s1 is binding 1.
Texture2D materials[4] : register(t2);
SamplerState materialSampler : register(s1);

cbuffer Params : register(b0)
{
    uint layer;
    uint3 pad;
};

float4 main(float4 position : SV_Position, float2 uv : TEXCOORD0) : SV_Target
{
    return materials[layer & 3].Sample(materialSampler, uv);
}
