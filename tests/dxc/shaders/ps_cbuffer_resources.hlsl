// Resources declared inside a cbuffer are global resources, created before the cbuffer (DXC:
// they take the next free bindings first); a cbuffer holding nothing but resources is dropped
// (its register reserves nothing).
cbuffer Params : register(b0)
{
    float4 tint;
};

cbuffer Material
{
    float4 scale;
    Texture2D albedo;
    SamplerState albedoSampler;
};

cbuffer Samplers : register(b2)
{
    SamplerState pointSampler;
};

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return tint * scale * albedo.Sample(albedoSampler, uv) + albedo.Sample(pointSampler, uv);
}
