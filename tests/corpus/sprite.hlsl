// A textured, tinted sprite: vertex + pixel, a constant buffer with a matrix, a texture, a sampler.
cbuffer Frame
{
    float4x4 ViewProjection;
    float4 Tint;
    float2 Offset;
    float Scale;
    float Time;
};

Texture2D<float4> SpriteTexture;
SamplerState SpriteSampler;

struct VSInput
{
    float2 Position : POSITION;
    float2 TexCoord : TEXCOORD0;
    float4 Color : COLOR0;
};

struct VSOutput
{
    float4 Position : SV_Position;
    float2 TexCoord : TEXCOORD0;
    float4 Color : COLOR0;
};

[shader("vertex")]
VSOutput VSMain(VSInput input)
{
    VSOutput output;
    float2 p = input.Position * Scale + Offset;
    output.Position = mul(ViewProjection, float4(p, 0.0, 1.0));
    output.TexCoord = input.TexCoord;
    output.Color = input.Color;
    return output;
}

[shader("pixel")]
float4 PSMain(VSOutput input) : SV_Target0
{
    return SpriteTexture.Sample(SpriteSampler, input.TexCoord) * input.Color * Tint;
}
