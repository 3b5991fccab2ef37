// DXC's register(spaceN): set N, the next free binding of that set once explicit registers are
// placed (in declaration order), whatever the resource's class.
Texture2D albedo : register(space1);
SamplerState albedoSampler : register(space1);
Texture2D normals : register(t0, space1);

cbuffer Params : register(space2)
{
    float4 tint;
};

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return albedo.Sample(albedoSampler, uv) * normals.Sample(albedoSampler, uv) * tint;
}
